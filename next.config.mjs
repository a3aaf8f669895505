/** @type {import('next').NextConfig} */
const nextConfig = {
  // Server packages load from node_modules at run time instead of being bundled:
  // native addons and database drivers must be the same copies the Quire server uses.
  // yjs too: the server's rooms and the pages rendered on it must share one copy (Yjs checks constructors by identity).
  serverExternalPackages: ["@electric-sql/pglite", "postgres", "@node-rs/argon2", "drizzle-orm", "yjs"],
  poweredByHeader: false,
};

export default nextConfig;
