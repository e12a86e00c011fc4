/**
 * A Server-Sent Events parser (the WHATWG event-stream format) fed with arbitrary byte chunks.
 * Chunk boundaries may fall anywhere: inside a UTF-8 sequence (the streaming TextDecoder keeps
 * the partial bytes), between the CR and LF of a CRLF (a trailing CR is remembered), or in the
 * middle of a field name.
 */

export interface SseEvent {
  /** The `event:` field, or "message" when absent. */
  event: string;
  /** The `data:` lines joined with "\n". */
  data: string;
  id?: string;
}

const lineBreak = /\r\n|\r|\n/g;

export class SseParser {
  private readonly decoder = new TextDecoder("utf-8");
  private buffer = "";
  private skipLeadingLf = false;
  private sawFirstChunk = false;
  private eventName = "";
  private dataLines: string[] = [];
  private hasData = false;
  private lastId: string | undefined;

  /** Feeds bytes; returns the events completed by them (possibly none). */
  push(chunk: Uint8Array): SseEvent[] {
    return this.feed(this.decoder.decode(chunk, { stream: true }));
  }

  /** Ends the stream: flushes a partial UTF-8 sequence and a last line without a line break. */
  end(): SseEvent[] {
    const events = this.feed(this.decoder.decode());
    if (this.buffer.length > 0) {
      this.processLine(this.buffer);
      this.buffer = "";
    }
    // An event not terminated by a blank line is discarded by the spec; servers that close
    // right after the last data line are common enough that we dispatch it instead.
    const last = this.dispatch();
    if (last) events.push(last);
    return events;
  }

  private feed(text: string): SseEvent[] {
    if (text.length === 0) return [];
    if (!this.sawFirstChunk) {
      this.sawFirstChunk = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    if (this.skipLeadingLf) {
      this.skipLeadingLf = false;
      if (text.charCodeAt(0) === 10) text = text.slice(1);
    }
    const events: SseEvent[] = [];
    const input = this.buffer + text;
    let start = 0;
    lineBreak.lastIndex = 0;
    for (let m = lineBreak.exec(input); m; m = lineBreak.exec(input)) {
      // A CR at the very end may be the first half of a CRLF split across chunks.
      if (m[0] === "\r" && m.index === input.length - 1) this.skipLeadingLf = true;
      const line = input.slice(start, m.index);
      start = m.index + m[0].length;
      if (line.length === 0) {
        const event = this.dispatch();
        if (event) events.push(event);
      } else {
        this.processLine(line);
      }
    }
    this.buffer = input.slice(start);
    return events;
  }

  private processLine(line: string): void {
    if (line.charCodeAt(0) === 58 /* : */) return; // comment
    const colon = line.indexOf(":");
    let field: string;
    let value: string;
    if (colon === -1) {
      field = line;
      value = "";
    } else {
      field = line.slice(0, colon);
      value = line.charCodeAt(colon + 1) === 32 ? line.slice(colon + 2) : line.slice(colon + 1);
    }
    switch (field) {
      case "data":
        this.dataLines.push(value);
        this.hasData = true;
        break;
      case "event":
        this.eventName = value;
        break;
      case "id":
        if (!value.includes("\0")) this.lastId = value;
        break;
      default:
        break; // "retry" and unknown fields do not concern a one-shot request stream
    }
  }

  private dispatch(): SseEvent | undefined {
    const name = this.eventName;
    this.eventName = "";
    if (!this.hasData) {
      this.dataLines = [];
      return undefined;
    }
    const event: SseEvent = { event: name || "message", data: this.dataLines.join("\n") };
    if (this.lastId !== undefined) event.id = this.lastId;
    this.dataLines = [];
    this.hasData = false;
    return event;
  }
}
