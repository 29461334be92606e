/** Merges resolver maps by type, so each resource's resolvers can live in a file of its own. */
export function mergeResolvers<T extends object>(maps: readonly T[]): T {
  const out: Record<string, unknown> = {};
  for (const map of maps) {
    for (const [typeName, fields] of Object.entries(map)) {
      const existing = out[typeName];
      out[typeName] = existing && typeof existing === 'object' && !(fields && typeof fields === 'object' && 'serialize' in fields) ? { ...existing, ...fields } : fields;
    }
  }
  return out as T;
}
