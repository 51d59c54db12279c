/** Prints one benchmark figure as a JSON line. */
export function report(bench: string, figure: string, value: number, unit: string, context: Record<string, unknown> = {}) {
  console.log(JSON.stringify({ bench, figure, value: Number(value.toFixed(4)), unit, ...context }));
}
