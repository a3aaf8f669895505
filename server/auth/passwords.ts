/** Password hashing with argon2id: deliberately slow, salted, self-describing hashes. */
import { hash, verify } from "@node-rs/argon2";

export const hashPassword = (password: string): Promise<string> => hash(password);

export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}
