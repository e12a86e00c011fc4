/**
 * A count with its thousands grouped by commas, as English writes it: 27000 -> "27,000".
 * Written out rather than with `toLocaleString("en")`: a process's first locale formatting loads
 * ICU's number data (about 10 ms in the sidecar's Node, 18 ms in the CLI's), which every task of
 * the CLI paid for its first status line. Whole numbers only; anything else is shown as `String` does.
 */
export function withThousands(n: number | bigint): string {
  const digits = String(n);
  if (!/^-?\d+$/.test(digits)) return digits;
  const sign = digits.startsWith("-") ? "-" : "";
  const body = sign ? digits.slice(1) : digits;
  const head = body.length % 3 || 3;
  const groups = [body.slice(0, head)];
  for (let i = head; i < body.length; i += 3) groups.push(body.slice(i, i + 3));
  return sign + groups.join(",");
}
