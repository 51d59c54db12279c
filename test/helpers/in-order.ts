import { expect } from 'vitest';

/** Asserts that each piece is in the text, each after the one before (the text is the failure's message). */
export function expectInOrder(text: string, pieces: string[]): void {
  const at = pieces.map((piece) => text.indexOf(piece));
  expect(
    pieces.filter((_, index) => at[index]! < 0),
    text,
  ).toEqual([]);
  expect(at, text).toEqual([...at].sort((a, b) => a - b));
}
