/**
 * Input as a client could send it, judged by the procedure's own schema: for the tests that send what the
 * types forbid on purpose (an unknown role, an extra field, a bad id). The one place a test steps around
 * the input types; the type parameter is taken from where the value goes.
 */
export function asSent<T>(input: unknown): T {
  return input as T;
}

/** A context part a test's path never reaches: touching it fails the test with the part's name. */
export function unreached<T extends object>(part: string): T {
  return new Proxy({} as T, {
    get(_target, property) {
      throw new Error(`${part}.${String(property)} was reached, though this test's path never uses ${part}`);
    },
  });
}
