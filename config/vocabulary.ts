/**
 * The words the platform itself writes into names, ARNs, tags and descriptions. A tenant id
 * made only of these words would read as that tenant in every other tenant's resources (the
 * tenant-isolation policy matches ids as whole words), so validation refuses it.
 */
import { REGIONS } from "../facts/regions";
import { PLATFORM_WORDS } from "../facts/reserved-words";

/** Word tokens as the isolation policy sees them: lowercase runs of letters and digits. */
export function wordsOf(text: string): string[] {
  return (text.toLowerCase().match(/[a-z0-9]+/g) ?? []).filter((w) => /^[a-z]/.test(w) && (w.match(/\d/g)?.length ?? 0) < 3); // ids and hashes aside
}

const RESERVED = new Set<string>([...PLATFORM_WORDS, ...Object.keys(REGIONS).flatMap(wordsOf), ...Object.values(REGIONS).flatMap(wordsOf)]);

/** True when every hyphen-separated part of the id is a platform word. */
export function collidesWithPlatformWords(tenantId: string): boolean {
  return tenantId.split("-").every((part) => RESERVED.has(part));
}
