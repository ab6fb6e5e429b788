// A chat id as a LangGraph thread id. LangGraph servers take UUIDs for thread ids (the
// JavaScript server refuses anything else), while `useChat` makes up short random ids
// for new chats: a UUID stays as it is, any other id becomes the UUID v5 of itself in
// this package's namespace, the same on every page and server.

// This package's UUID namespace (a random v4, fixed here for good).
export const CHAT_NAMESPACE = "5b0f4c1e-6a3d-4e47-9c2a-8f1d3b7e6a90";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function bytesOf(uuid) {
  const hex = uuid.replace(/-/g, "");
  return Uint8Array.from({ length: 16 }, (_, i) => parseInt(hex.slice(2 * i, 2 * i + 2), 16));
}

function uuidOf(bytes) {
  const hex = [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** The thread id of `chatId` (RFC 9562 v5 for a chat id that is no UUID). */
export async function threadIdOf(chatId) {
  const id = String(chatId);
  if (UUID.test(id)) return id.toLowerCase();
  const name = new TextEncoder().encode(id);
  const input = new Uint8Array(16 + name.length);
  input.set(bytesOf(CHAT_NAMESPACE));
  input.set(name, 16);
  const digest = new Uint8Array(await globalThis.crypto.subtle.digest("SHA-1", input)).slice(0, 16);
  digest[6] = (digest[6] & 0x0f) | 0x50;
  digest[8] = (digest[8] & 0x3f) | 0x80;
  return uuidOf(digest);
}
