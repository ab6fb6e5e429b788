// The live tests' own requests to the server (not through a fault proxy): what the run
// really did. Node's fetch reuses idle connections, and the server may close one just
// as a request goes out on it ("fetch failed": a keep-alive race, not a fault under
// test). Such a request did not reach the server: it is sent again, on a new connection.

const ATTEMPTS = 3;

/** `fetch(url, init)`, sent again when it failed on the network before any answer. */
export async function direct(url, init = undefined) {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await fetch(url, init);
    } catch (error) {
      if (attempt >= ATTEMPTS || !(error instanceof TypeError)) throw error;
    }
  }
}
