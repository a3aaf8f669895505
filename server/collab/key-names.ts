/**
 * Names for key objects (a branch's, a section's), built once per object: a
 * room's key is asked for its name on every message of the room, and
 * building the name (a new string to hash) cost more than the lookup it
 * served. Keys are never changed after they are made, so a name stays true.
 */
export function namedOncePerKey<K extends object>(build: (key: K) => string): (key: K) => string {
  const names = new WeakMap<K, string>();
  return (key) => {
    let name = names.get(key);
    if (name === undefined) {
      name = build(key);
      names.set(key, name);
    }
    return name;
  };
}
