//! Small PDFs made for tests: paragraphs of text in Helvetica, a title in
//! the Info dictionary, a language in the catalog, URI links; or pages
//! with no text at all (a scan). Written with a correct cross-reference
//! table, as a PDF writer would.

/// What goes into a test PDF.
#[derive(Debug, Default, Clone)]
pub struct TestPdf<'a> {
    pub title: Option<&'a str>,
    pub lang: Option<&'a str>,
    /// Each a paragraph; pages hold about 40 lines.
    pub paragraphs: Vec<String>,
    /// URI link annotations, on the first page.
    pub links: Vec<String>,
}

/// Characters on a line of the page.
const LINE_CHARS: usize = 80;
const LINES_PER_PAGE: usize = 40;

impl TestPdf<'_> {
    pub fn bytes(&self) -> Vec<u8> {
        let pages = self.pages();
        let mut objects: Vec<String> = Vec::new();
        // 1 catalog, 2 pages, 3 font, 4 info, then per page: page, contents;
        // then the link annotations.
        let page_ids: Vec<usize> = (0..pages.len()).map(|i| 5 + 2 * i).collect();
        let first_annot = 5 + 2 * pages.len();
        let lang = self
            .lang
            .map(|l| format!(" /Lang ({})", escape(l)))
            .unwrap_or_default();
        objects.push(format!("<< /Type /Catalog /Pages 2 0 R{lang} >>"));
        let kids: Vec<String> = page_ids.iter().map(|id| format!("{id} 0 R")).collect();
        objects.push(format!(
            "<< /Type /Pages /Kids [{}] /Count {} >>",
            kids.join(" "),
            pages.len()
        ));
        objects.push("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".into());
        let title = self
            .title
            .map(|t| format!("/Title ({})", escape(t)))
            .unwrap_or_default();
        objects.push(format!("<< {title} /Producer (nearcrawl tests) >>"));
        for (i, lines) in pages.iter().enumerate() {
            let annots = if i == 0 && !self.links.is_empty() {
                let ids: Vec<String> = (0..self.links.len())
                    .map(|k| format!("{} 0 R", first_annot + k))
                    .collect();
                format!(" /Annots [{}]", ids.join(" "))
            } else {
                String::new()
            };
            objects.push(format!(
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {} 0 R \
                 /Resources << /Font << /F1 3 0 R >> >>{annots} >>",
                page_ids[i] + 1
            ));
            let mut content = String::from("BT /F1 10 Tf 14 TL 40 750 Td\n");
            for line in lines {
                content.push_str(&format!("({}) Tj T*\n", escape(line)));
            }
            content.push_str("ET\n");
            objects.push(format!(
                "<< /Length {} >>\nstream\n{content}endstream",
                content.len()
            ));
        }
        for (k, link) in self.links.iter().enumerate() {
            let y = 700 - 20 * k;
            objects.push(format!(
                "<< /Type /Annot /Subtype /Link /Rect [40 {y} 300 {}] /Border [0 0 0] \
                 /A << /S /URI /URI ({}) >> >>",
                y + 12,
                escape(link)
            ));
        }
        let mut out = b"%PDF-1.4\n%\xE2\xE3\xCF\xD3\n".to_vec();
        let mut offsets = Vec::new();
        for (i, body) in objects.iter().enumerate() {
            offsets.push(out.len());
            out.extend_from_slice(format!("{} 0 obj\n{body}\nendobj\n", i + 1).as_bytes());
        }
        let xref = out.len();
        out.extend_from_slice(
            format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
        );
        for o in offsets {
            out.extend_from_slice(format!("{o:010} 00000 n \n").as_bytes());
        }
        out.extend_from_slice(
            format!(
                "trailer\n<< /Size {} /Root 1 0 R /Info 4 0 R >>\nstartxref\n{xref}\n%%EOF\n",
                objects.len() + 1
            )
            .as_bytes(),
        );
        out
    }

    /// The lines of each page: paragraphs wrapped, a blank line between
    /// them. At least one page, empty for a PDF with no text.
    fn pages(&self) -> Vec<Vec<String>> {
        let mut lines = Vec::new();
        for p in &self.paragraphs {
            if !lines.is_empty() {
                lines.push(String::new());
            }
            let mut line = String::new();
            for word in p.split_whitespace() {
                if !line.is_empty() && line.len() + word.len() + 1 > LINE_CHARS {
                    lines.push(std::mem::take(&mut line));
                }
                if !line.is_empty() {
                    line.push(' ');
                }
                line.push_str(word);
            }
            lines.push(line);
        }
        let mut pages: Vec<Vec<String>> = lines
            .chunks(LINES_PER_PAGE)
            .map(<[String]>::to_vec)
            .collect();
        if pages.is_empty() {
            pages.push(Vec::new());
        }
        pages
    }
}

/// A PDF string's special characters escaped; ASCII only (Helvetica's
/// standard encoding), others replaced.
fn escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        match c {
            '(' | ')' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_ascii() && !c.is_ascii_control() => out.push(c),
            _ => out.push('?'),
        }
    }
    out
}
