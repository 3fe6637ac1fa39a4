/**
 * Which files and folders of a docs tree are documents: shared by the docs server and `tack knowledge init`, so
 * a folder that serves as docs becomes the same set of concepts.
 */
const DOC_EXTENSIONS = ['.md', '.mdx'] as const;

export function isDocFile(name: string): boolean {
  const lower = name.toLowerCase();
  return DOC_EXTENSIONS.some((ext) => lower.endsWith(ext));
}

/** Folders never read: dependencies, build output and anything hidden. */
export function isSkippedDir(name: string): boolean {
  return name.startsWith('.') || name === 'node_modules' || name === 'dist';
}
