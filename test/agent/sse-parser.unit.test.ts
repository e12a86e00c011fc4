import { describe, expect, it } from "vitest";
import { SseParser, type SseEvent } from "../../core/src/agent/providers/sse.js";

const encoder = new TextEncoder();

function parseInPieces(bytes: Uint8Array, cuts: number[]): SseEvent[] {
  const parser = new SseParser();
  const events: SseEvent[] = [];
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    events.push(...parser.push(bytes.subarray(from, cut)));
    from = cut;
  }
  events.push(...parser.end());
  return events;
}

const fixture =
  "\uFEFF: a comment line\n" +
  "event: content_block_delta\n" +
  'data: {"text":"héllo 🚀 wörld"}\n' +
  "\n" +
  "data: line one\r\n" +
  "data: line two\r\n" +
  "\r\n" +
  "event: ping\r" +
  "data:no-space\r" +
  "\r" +
  "id: 7\n" +
  "data\n" +
  "\n" +
  "event: only-event-no-data\n" +
  "\n" +
  "data: last without blank line";

const expected: SseEvent[] = [
  { event: "content_block_delta", data: '{"text":"héllo 🚀 wörld"}' },
  { event: "message", data: "line one\nline two" },
  { event: "ping", data: "no-space" },
  { event: "message", data: "", id: "7" },
  { event: "message", data: "last without blank line", id: "7" },
];

describe("SseParser", () => {
  it("parses LF, CRLF and CR line endings, comments, multi-line data, a BOM and a last unterminated event", () => {
    expect(parseInPieces(encoder.encode(fixture), [])).toEqual(expected);
  });

  it("gives the same events whichever single byte boundary splits the input", () => {
    const bytes = encoder.encode(fixture);
    for (let cut = 1; cut < bytes.length; cut++) {
      expect(parseInPieces(bytes, [cut]), `cut at byte ${cut}`).toEqual(expected);
    }
  });

  it("gives the same events when fed one byte at a time (inside UTF-8 sequences and CRLF pairs)", () => {
    const bytes = encoder.encode(fixture);
    const cuts = Array.from({ length: bytes.length - 1 }, (_, i) => i + 1);
    expect(parseInPieces(bytes, cuts)).toEqual(expected);
  });

  it("treats a CR at the end of a chunk and an LF at the start of the next as one line break", () => {
    const parser = new SseParser();
    expect(parser.push(encoder.encode("data: a\r"))).toEqual([]);
    expect(parser.push(encoder.encode("\n\r"))).toEqual([{ event: "message", data: "a" }]);
    // the second CR alone was a blank line already; a following LF must not be a second one
    expect(parser.push(encoder.encode("\ndata: b\n\n"))).toEqual([{ event: "message", data: "b" }]);
  });

  it("decodes a 4-byte emoji split over three chunks", () => {
    const bytes = encoder.encode("data: 🚀\n\n");
    expect(parseInPieces(bytes, [7, 8, 9])).toEqual([{ event: "message", data: "🚀" }]);
  });
});
