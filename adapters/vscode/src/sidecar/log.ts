/** The logging surface the extension's modules use (the "Dline" output channel implements it). */
export interface Log {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}
