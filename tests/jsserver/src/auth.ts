// A custom auth handler as a langgraph.js project writes one: a bearer token names the
// user, and each user sees only the threads and runs they made. The sidecar's tests
// start the server with it (langgraph.auth.json).
import { Auth, HTTPException } from "@langchain/langgraph-sdk/auth";

const USERS = new Set(["alice", "bob"]);

export const auth = new Auth()
  .authenticate((request: Request) => {
    const user = request.headers.get("authorization")?.match(/^Bearer (\w+)$/)?.[1];
    if (!user || !USERS.has(user)) {
      throw new HTTPException(401, { message: "a known bearer token is required" });
    }
    return { identity: user, permissions: [] };
  })
  .on("*", ({ value, user }) => {
    if (value && typeof value === "object" && "metadata" in value) {
      const owned = value as { metadata?: Record<string, unknown> };
      owned.metadata = { ...(owned.metadata ?? {}), owner: user.identity };
    }
    return { owner: user.identity };
  });
