/**
 * Text the database can store. PostgreSQL refuses a NUL character (U+0000) in `text` and `jsonb`, so a NUL
 * in any field made the call fail with a 500 once it reached a query. A lone UTF-16 surrogate (half of a
 * pair, legal in a JSON string escape) is not Unicode at all: it would be stored silently replaced by
 * U+FFFD. The server refuses both in every request, before validation (plugins/input-guard.ts), and says
 * which field held them.
 */

const NUL = String.fromCharCode(0);
/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export const TEXT_MESSAGES = {
  nul: (field: string) => `Invalid ${field}: must not contain NUL characters`,
  surrogate: (field: string) => `Invalid ${field}: must not contain unpaired surrogate characters`,
} as const;

/** What is wrong with one string, if anything. */
export function unstorableText(value: string): 'nul' | 'surrogate' | null {
  if (value.includes(NUL)) return 'nul';
  if (LONE_SURROGATE.test(value)) return 'surrogate';
  return null;
}

/** The longest field path a message names (a hostile key could be a megabyte long). */
const MAX_PATH = 80;

interface Node {
  value: unknown;
  key: string | number | null;
  parent: Node | null;
}

/** `a.b.0.c`, from the node up (built only for the answer; paths are not copied while walking). */
function label(node: Node, root: string): string {
  const keys: (string | number)[] = [];
  for (let at: Node | null = node; at && at.key !== null; at = at.parent) keys.push(at.key);
  const text = keys.length === 0 ? root : keys.reverse().join('.');
  return text.length > MAX_PATH ? `${text.slice(0, MAX_PATH)}…` : text;
}

/**
 * The first string (value or property name) in `value` that the database cannot store, as the message
 * to answer with, or null. `root` names the whole value when it is itself the bad string. Walks with its
 * own stack, so a deeply nested body cannot overflow the call stack.
 */
export function unstorableTextProblem(value: unknown, root = 'body'): string | null {
  const stack: Node[] = [{ value, key: null, parent: null }];
  while (stack.length > 0) {
    const node = stack.pop() as Node;
    const current = node.value;
    if (typeof current === 'string') {
      const problem = unstorableText(current);
      if (problem) return TEXT_MESSAGES[problem](label(node, root));
    } else if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) stack.push({ value: current[i], key: i, parent: node });
    } else if (current !== null && typeof current === 'object') {
      const entries = Object.entries(current);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i] as [string, unknown];
        // A bad property name is reported against the object that holds it.
        const keyProblem = unstorableText(key);
        if (keyProblem) return TEXT_MESSAGES[keyProblem](label(node, root));
        stack.push({ value: child, key, parent: node });
      }
    }
  }
  return null;
}
