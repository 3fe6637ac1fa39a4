/**
 * Which files and folders of a docs tree are documents: shared by the docs server and `tack knowledge init`, so
 * a folder that serves as docs becomes the same set of concepts. Which folders are read is the tree walk's
 * skip list (walk-tree.ts isSkippedDir).
 */
const DOC_EXTENSIONS = ['.md', '.mdx'] as const;

export function isDocFile(name: string): boolean {
  const lower = name.toLowerCase();
  return DOC_EXTENSIONS.some((ext) => lower.endsWith(ext));
}
