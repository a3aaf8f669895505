/** @type {import('next').NextConfig} */
const nextConfig = {
  // Server packages load from node_modules at run time instead of being bundled:
  // native addons and database drivers must be the same copies the Quire server uses.
  serverExternalPackages: ["@electric-sql/pglite", "postgres", "@node-rs/argon2", "drizzle-orm"],
  poweredByHeader: false,
};

export default nextConfig;
