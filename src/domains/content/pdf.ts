import { PDFDocument, StandardFonts, rgb, type PDFFont, type PDFPage } from "pdf-lib";
import { flattenTree, pageTree, type PageTreeNode, type RevisionContent } from "./model.js";
import { textBlocks } from "./markdown.js";

/**
 * Renders content as a PDF: each page (in tree order, or only the one asked for) starts on a new
 * sheet with its title, description and text; headings, list items, quotes and code keep a
 * readable layout. The standard PDF fonts only encode Latin-1 (WinAnsi): other characters are
 * transliterated when possible, else shown as "?".
 */

const SHEET = { width: 595.28, height: 841.89, margin: 56 };

const REPLACEMENTS: Record<string, string> = {
  "\u2018": "'",
  "\u2019": "'",
  "\u201c": '"',
  "\u201d": '"',
  "\u2013": "-",
  "\u2014": "-",
  "\u2026": "...",
  "\u2022": "-",
  "\u00a0": " ",
  "\t": "    ",
};

/** Text the standard fonts can encode. */
export function winAnsi(text: string): string {
  let out = "";
  for (const ch of text.normalize("NFC")) {
    if (REPLACEMENTS[ch] !== undefined) out += REPLACEMENTS[ch];
    else if ((ch >= " " && ch <= "~") || (ch >= "\u00a1" && ch <= "\u00ff")) out += ch;
    else {
      const base = ch.normalize("NFD").replace(/[\u0300-\u036f]/g, "");
      out += base && ((base >= " " && base <= "~") || (base >= "\u00a1" && base <= "\u00ff")) ? base : "?";
    }
  }
  return out;
}

class Writer {
  private page!: PDFPage;
  private y = 0;
  constructor(
    private doc: PDFDocument,
    private fonts: { regular: PDFFont; bold: PDFFont; mono: PDFFont },
  ) {}

  newSheet() {
    this.page = this.doc.addPage([SHEET.width, SHEET.height]);
    this.y = SHEET.height - SHEET.margin;
  }

  private wrap(text: string, font: PDFFont, size: number, width: number): string[] {
    const lines: string[] = [];
    for (const paragraph of text.split("\n")) {
      let line = "";
      for (const word of paragraph.split(/(\s+)/)) {
        const candidate = line + word;
        if (font.widthOfTextAtSize(candidate, size) <= width || !line.trim()) {
          line = candidate;
          // A single word wider than the line is cut.
          while (font.widthOfTextAtSize(line, size) > width && line.length > 1) {
            let cut = line.length - 1;
            while (cut > 1 && font.widthOfTextAtSize(line.slice(0, cut), size) > width) cut--;
            lines.push(line.slice(0, cut));
            line = line.slice(cut);
          }
        } else {
          lines.push(line.trimEnd());
          line = word.trimStart();
        }
      }
      lines.push(line.trimEnd());
    }
    return lines;
  }

  text(raw: string, opts: { font?: "regular" | "bold" | "mono"; size?: number; indent?: number; gap?: number; color?: number } = {}) {
    const font = this.fonts[opts.font ?? "regular"];
    const size = opts.size ?? 11;
    const indent = opts.indent ?? 0;
    const leading = size * 1.35;
    const width = SHEET.width - 2 * SHEET.margin - indent;
    for (const line of this.wrap(winAnsi(raw), font, size, width)) {
      if (this.y - leading < SHEET.margin) this.newSheet();
      this.y -= leading;
      if (line)
        this.page.drawText(line, {
          x: SHEET.margin + indent,
          y: this.y,
          size,
          font,
          color: rgb(opts.color ?? 0, opts.color ?? 0, opts.color ?? 0),
        });
    }
    this.y -= opts.gap ?? size * 0.6;
  }
}

export async function renderPdf(content: RevisionContent, opts: { title: string; pageId?: string | null }): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  doc.setTitle(winAnsi(opts.title));
  doc.setProducer("Documentation API");
  const fonts = {
    regular: await doc.embedFont(StandardFonts.Helvetica),
    bold: await doc.embedFont(StandardFonts.HelveticaBold),
    mono: await doc.embedFont(StandardFonts.Courier),
  };
  const writer = new Writer(doc, fonts);
  const pages: PageTreeNode[] = flattenTree(pageTree(content)).filter((p) => !opts.pageId || p.id === opts.pageId);
  if (!pages.length) {
    writer.newSheet();
    writer.text(opts.title, { font: "bold", size: 20 });
    writer.text("This content has no pages.", { color: 0.4 });
  }
  for (const page of pages) {
    writer.newSheet();
    writer.text(page.title, { font: "bold", size: page.type === "group" ? 16 : 20, gap: 10 });
    if (page.description) writer.text(page.description, { color: 0.35, gap: 12 });
    if (page.type === "link" && page.href) writer.text(page.href, { color: 0.2 });
    if (page.type !== "document") continue;
    for (const block of textBlocks(page.markdown)) {
      switch (block.kind) {
        case "heading":
          writer.text(block.text, { font: "bold", size: Math.max(11, 18 - 2 * block.level), gap: 6 });
          break;
        case "code":
          writer.text(block.text, { font: "mono", size: 9.5, indent: 12 });
          break;
        case "item":
          writer.text(`- ${block.text}`, { indent: 12 * block.level, gap: 3 });
          break;
        case "quote":
          writer.text(block.text, { indent: 16, color: 0.3 });
          break;
        default:
          writer.text(block.text);
      }
    }
  }
  return doc.save({ useObjectStreams: false });
}
