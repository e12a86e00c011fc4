/**
 * A file name as a listing shows it to the model: as it is, unless it holds a line break or
 * another control character (`new\nline.txt` would read as two files, `\r` or an escape
 * sequence would hide text): then quoted as a JSON string, which the model can pass back as a
 * tool's `path` unchanged.
 */
const CONTROL = /[\u0000-\u001f\u007f]/;

export function listedName(name: string): string {
  return CONTROL.test(name) ? JSON.stringify(name) : name;
}
