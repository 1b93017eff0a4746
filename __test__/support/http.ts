/** A response cut mid-body, as each runtime's `fetch` reports reading it: Node's undici, Bun, Deno. */
export const CUT_BODY = /terminated|ECONNRESET|error reading a body from connection/
