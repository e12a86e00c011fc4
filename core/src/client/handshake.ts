/** The one line a sidecar prints on stdout when it is ready (docs/protocol.md, "Handshake and authentication"). */
export interface Handshake {
  dline: "ready";
  protocol: number;
  version: string;
  url: string;
  token: string;
  pid: number;
}

export function parseHandshake(line: string): Handshake {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw new Error(`The sidecar printed something that is not a handshake: ${line.slice(0, 200)}`);
  }
  const h = value as Partial<Handshake>;
  if (h.dline !== "ready" || typeof h.url !== "string" || typeof h.token !== "string" || typeof h.pid !== "number") {
    throw new Error(`The sidecar's handshake is incomplete: ${line.slice(0, 200)}`);
  }
  return h as Handshake;
}
