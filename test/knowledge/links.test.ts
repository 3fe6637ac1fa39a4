import { describe, expect, it } from 'vitest';
import { bodyLinks, codeLines, footnoteRefs } from '../../src/knowledge/links.js';

const targets = (body: string) => bodyLinks(body).map((l) => l.target);

describe('bodyLinks', () => {
  it('reads inline links, images and reference definitions with the forms CommonMark allows', () => {
    expect(targets('[a](x.md) and ![b](pic.png)')).toEqual(['x.md', 'pic.png']);
    // Angle-bracket destinations may hold spaces, inline and in reference definitions.
    expect(targets('[a](<my folder/a concept.md>)')).toEqual(['my folder/a concept.md']);
    expect(targets('[a](<with space.md> "title")')).toEqual(['with space.md']);
    expect(targets('[label]: <./with space.md> "Title"')).toEqual(['./with space.md']);
    expect(targets('[label]: ./target.md "Title"')).toEqual(['./target.md']);
    // Titles in "", '' and ().
    expect(targets(`[a](x.md "t (1)") [b](y.md 't') [c](z.md (t))`)).toEqual(['x.md', 'y.md', 'z.md']);
    // Balanced parentheses belong to the destination; an escaped one too.
    expect(targets('[a](foo_(bar).md) [b](baz\\).md)')).toEqual(['foo_(bar).md', 'baz).md']);
    // Link text over two lines; a link inside an image's alt text.
    expect(targets('[two\nlines](two.md)')).toEqual(['two.md']);
    expect(targets('![alt [in](in.md)](img.png)')).toEqual(['in.md', 'img.png']);
    expect(targets('%-escapes stay as written: [a](with%20space.md)')).toEqual(['with%20space.md']);
  });

  it('reports the line of each link', () => {
    expect(bodyLinks('intro\n\n[a](a.md)\n[b]: b.md').map((l) => [l.target, l.line])).toEqual([
      ['a.md', 3],
      ['b.md', 4],
    ]);
  });

  it('leaves out code, comments, escapes, footnotes and what is not a link', () => {
    expect(targets('``a `[x](in-span.md)` b`` and [z](z.md)')).toEqual(['z.md']);
    expect(targets('``a ` [x](in-span.md) b`` [z](z.md)')).toEqual(['z.md']);
    expect(targets('```\n[in](fence.md)\n  ```\n[after](after.md)')).toEqual(['after.md']);
    expect(targets('~~~\n[in](t.md)\n~~~\n````\n```\n[in](x.md)\n```\n````\n[out](o.md)')).toEqual(['o.md']);
    expect(targets('- item\n  ```\n  [in](x.md)\n  ```')).toEqual([]);
    expect(targets('```\n[label]: infence.md\n```')).toEqual([]);
    // An indented code block (as in the spec's own # Computation examples).
    expect(targets('para\n\n    [code](indented.md)\n\n[out](o.md)')).toEqual(['o.md']);
    expect(targets('# Computation\n    SELECT "[x](x.md)"')).toEqual([]);
    // ...but an indented line that continues a paragraph or a list item is prose.
    expect(targets('para\n    [cont](cont.md)')).toEqual(['cont.md']);
    expect(targets('- item\n\n    [in item](item.md)')).toEqual(['item.md']);
    expect(targets('<!-- [x](comment.md)\n[y](comment2.md) -->[z](z.md)')).toEqual(['z.md']);
    expect(targets('\\[not](link.md) [a]\\(nor.md)')).toEqual([]);
    expect(targets('text[^a]\n\n[^a]: see [real](real.md)')).toEqual(['real.md']);
    expect(targets('[^src]: http://x\n[a]() [b]( )')).toEqual([]);
    // A link inside a link's text: only the inner one is a link (CommonMark).
    expect(targets('[a [b](inner.md) c](outer.md)')).toEqual(['inner.md']);
    // An unmatched backtick is a backtick, not the start of code.
    expect(targets('a `b [c](c.md)')).toEqual(['c.md']);
  });

  it('stays linear on pathological input', () => {
    // No time bound (timing belongs in bench/): the regex this replaced took minutes on these, past the
    // test's own timeout.
    for (const body of [
      '['.repeat(100_000),
      '[a]('.repeat(50_000),
      '!['.repeat(100_000),
      '`'.repeat(50_000),
      '` `` ```'.repeat(20_000),
      '[a](b'.repeat(40_000),
      `[a](${'('.repeat(100_000)}`,
    ])
      expect(Array.isArray(bodyLinks(body))).toBe(true);
  });
});

describe('footnoteRefs and codeLines', () => {
  it('finds footnote references outside code, not their definitions', () => {
    expect(
      footnoteRefs('a[^one] `[^code]`\n\n```\n[^fenced]\n```\n[^one]: the one\n[^two] b').map((f) => f.label),
    ).toEqual(['one', 'two']);
  });

  it('marks fenced and indented code lines', () => {
    expect(codeLines('a\n```\nx\n```\nb\n\n    code\nc')).toEqual([
      false,
      true,
      true,
      true,
      false,
      false,
      true,
      false,
    ]);
  });
});
