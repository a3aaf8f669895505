/** The environment is read and validated in one place (server/config.ts). */
import { describe, expect, test } from "vitest";
import { loadConfig, publicBaseUrl } from "@/server/config";

const env = (values: Record<string, string>) => values as unknown as NodeJS.ProcessEnv;

describe("loadConfig", () => {
  test("defaults without any variable", () => {
    const config = loadConfig(env({}));
    expect(config).toMatchObject({
      port: 3000,
      host: "0.0.0.0",
      databaseUrl: undefined,
      publicUrl: undefined,
      siteUrl: undefined,
      trustProxy: false,
      s3: undefined,
    });
    expect(config.dataDir.endsWith(".quire")).toBe(true);
    expect(config.proxy).toEqual({ url: undefined, token: undefined });
  });

  test.each([
    ["PORT", "abc"],
    ["PORT", "70000"],
    ["QUIRE_TRUST_PROXY", "maybe"],
    ["QUIRE_PUBLIC_URL", "not a url"],
    ["NEXTAUTH_URL", "localhost:3000"],
    ["QUIRE_MAX_UPLOAD_BYTES", "0"],
    ["NEXTAUTH_SECRET", "short"],
  ])("%s=%j is refused, naming the variable", (name, value) => {
    expect(() => loadConfig(env({ [name]: value }))).toThrow(new RegExp(`Invalid environment: ${name}`));
  });

  test("sign-in redirects follow NEXTAUTH_URL, else QUIRE_PUBLIC_URL; the proxy takes QUIRE_URL and QUIRE_TOKEN", () => {
    expect(loadConfig(env({ QUIRE_PUBLIC_URL: "https://docs.example.com" })).siteUrl).toBe("https://docs.example.com");
    expect(loadConfig(env({ QUIRE_PUBLIC_URL: "https://docs.example.com", NEXTAUTH_URL: "https://auth.example.com" })).siteUrl).toBe(
      "https://auth.example.com",
    );
    expect(loadConfig(env({ QUIRE_URL: "http://q:3000", QUIRE_TOKEN: "qk_x" })).proxy).toEqual({ url: "http://q:3000", token: "qk_x" });
  });
});

describe("publicBaseUrl", () => {
  test("QUIRE_PUBLIC_URL wins, then the request's origin, then the server's own URL; no trailing slash", () => {
    expect(
      publicBaseUrl({ configured: "https://docs.example.com/", requestOrigin: "http://10.0.0.5:3000", ownUrl: "http://localhost:3000" }),
    ).toBe("https://docs.example.com");
    expect(publicBaseUrl({ configured: undefined, requestOrigin: "http://10.0.0.5:3000", ownUrl: "http://localhost:3000" })).toBe(
      "http://10.0.0.5:3000",
    );
    expect(publicBaseUrl({ configured: undefined, ownUrl: "http://localhost:3000/" })).toBe("http://localhost:3000");
  });
});
