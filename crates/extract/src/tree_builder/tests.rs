use proptest::prelude::*;

use super::*;
use crate::dom::dump;

/// This builder's tree of `markup`, if it does not give up.
fn ours(markup: &str) -> Option<Dom> {
    let builder = Builder::new(Dom::default());
    crate::tokenize::tokenize(markup, &builder);
    builder.finish()
}

/// Our tree is html5ever's whenever we build one; says whether we did.
pub(crate) fn same_or_gave_up(markup: &str) -> bool {
    let theirs = dump(&html5evers(markup, 0));
    match ours(markup) {
        Some(tree) => {
            assert_eq!(dump(&tree), theirs, "tree of {markup:?}");
            true
        }
        None => false,
    }
}

#[test]
fn ordinary_pages_are_built_here_as_html5ever_builds_them() {
    for markup in [
        "",
        "  \n",
        "text only",
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>T &amp; t</title>\
         <link rel=stylesheet href=a.css><style>p{}</style><script>var x</script></head>\
         <body class=b><h1>Head</h1><p>One <b>two</b> <a href=x>three</a></p></body></html>\n",
        "<!DOCTYPE HTML>\n<html>\n<head>\n<title>x</title>\n</head>\n<body>\n<div>a</div>\n</body>\n</html>\n<!-- after -->\n",
        "<!doctype html><!-- c --><p>x</p></body><!-- in html --></html><!-- in doc -->  ",
        "<p>one<p>two<div>three</div><p>four",
        "<ul><li>a<li>b<ul><li>c</ul><li>d</ul><dl><dt>t<dd>d<dt>u</dl>",
        "<h1>a<h2>b</h1>c</h3>d",
        "<p>open <b>bold <i>both</i></b> after</p><p><b>x</p><p>y</b>z",
        "<p><em>a<p>b</em>c",
        "<table><tr><td>1<td>2</table><p>x",
        "<table>\n <thead><tr><th>h</th></tr></thead>\n <tbody>\n  <tr><td>1</td><td>2</td></tr>\n </tbody>\n</table>",
        "<table><caption>c<b>d</caption><colgroup><col><col span=2></colgroup><tr><td>x</table>",
        "<table><col><tr><td><table><tr><td>in</table></td></tr></table>",
        "<table><tr><td>a<td>b</tr><tr><th>c</table>after",
        "<table><tbody><tr><td>1</tbody><tfoot><tr><td>f</tfoot></table>",
        "<table><tr><td><b>x</td><td>y</b></td></tr></table>",
        "<table><form><tr><td><input type=hidden name=a></table>",
        "<select><option>a<option>b<optgroup><option>c</select><input>",
        "<form><input name=q><button>go<button>again</button></form></form>",
        "<pre>\nfirst</pre><listing>\n\nx</listing><textarea>\nt</textarea>",
        "<div><span>a</div>b</span>c",
        "<a href=1>x</a><a href=2>y</a><code>z</code>",
        "<b><b><b><b>deep</b></b></b></b><b>again",
        "<p><i>x<i>y<i>z<i>w</p><p>q",
        // Noah's Ark: alike is the same name and attributes, in any order.
        "<p><b class=x id=1>a<b id=1 class=x>b<b class=x id=1>c<b class=x id=1>d<b class=x>e</p><p>q",
        "<p><i a=1>x<i a=2>y<i a=1>z<i a=1>w<i a=1 b=2>v</p><p>q",
        "<object><b>x</object>y<applet>z</applet>",
        "<iframe>&lt;</iframe><noscript><p>n</p></noscript><xmp><b></xmp><noembed>x</noembed>",
        "<head><noscript><link></noscript></head>",
        "<html><head></head>\n<script>x</script>\n<body>",
        "<head></head><meta name=a><title>late</title><body>",
        "</head></body></html><p>x",
        "<br/><img src=a><hr><wbr><param><source><track><embed><area><keygen>",
        "<p>a<hr>b",
        "text</p>after",
        "<div></span></div>",
        "<body><p>x</body> \n <p>y",
        "<html></html>  text",
        "<title>never closed",
        "<style>a",
        "<!DOCTYPE html PUBLIC \"-//W3C//DTD XHTML 1.0 Transitional//EN\" \"http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd\"><p><table><tr><td>x</table>",
        "<!DOCTYPE html PUBLIC \"-//W3C//DTD HTML 4.01 Transitional//EN\"><p><table></table>",
        "<!DOCTYPE html><p><table></table>",
        "<p><table></table>",
        "<dl><dd>a<div>b<dt>c</div></dl>",
        "<li>a<address><li>b</address>",
        "<ruby>a</ruby><summary>s</summary><details>d</details><search>q</search>",
        "<custom-el a=b>x</custom-el><x-y/>z",
        "<p>a\0b</p>",
        "<p><svg viewbox='0 0 9 9' xlink:href=x xml:lang=en xmlns=y class=i></svg>after</p>",
        "<b><svg/>x</b><svg> <!--c--></svg><table><tr><td><svg></svg></table>",
        "<html a=b><body z=1><html c=d a=z><body e=f z=2>",
        "<p>x</br>y</p>",
        // In an `<svg>`, CDATA is text (a bogus comment elsewhere).
        "<p><svg><![CDATA[a<b]]>c</svg>d<![CDATA[e]]>",
        // In an `<svg>`, NUL is U+FFFD (ignored in the body).
        "<svg>a\0b</svg>\0<svg>\0</svg>",
    ] {
        assert!(same_or_gave_up(markup), "gave up on {markup:?}");
    }
}

#[test]
fn what_the_spec_treats_apart_is_left_to_html5ever() {
    for markup in [
        "<svg><rect/></svg>",
        "<math><mi>x</mi></math>",
        "<template><p>x</template>",
        "<frameset><frame></frameset>",
        "<table>text</table>",
        "<table><div>x</div></table>",
        "<a href=1>x<a href=2>y",
        "<b>x<div>y</b>z</div>",
        "<nobr>x",
        "<plaintext>x",
    ] {
        assert!(!same_or_gave_up(markup), "built {markup:?}");
    }
}

#[test]
fn the_quirks_mode_is_html5evers_for_any_doctype() {
    for markup in [
        "<!DOCTYPE html><p>",
        "<!DOCTYPE html SYSTEM \"about:legacy-compat\"><p>",
        "<!DOCTYPE html PUBLIC \"-//W3C//DTD HTML 4.01//EN\"><p>",
        "<!DOCTYPE html PUBLIC \"-//W3C//DTD HTML 3.2 Final//EN\"><p><table>",
        "<!DOCTYPE svg><p>",
        "<!DOCTYPE><p>",
        "<p>",
    ] {
        assert!(same_or_gave_up(markup), "gave up on {markup:?}");
    }
}

/// Pieces of tree-building markup (tables, lists, formatting, forms,
/// SVG images, attributes on a second `<html>` or `<body>`), used with
/// the tokenizer's own pieces.
const PIECES: &[&str] = &[
    "<span>",
    "</span>",
    "<em>",
    "</em>",
    "<code>",
    "</code>",
    "<caption>",
    "</caption>",
    "<colgroup>",
    "<col>",
    "<thead>",
    "<tbody>",
    "</tbody>",
    "</tr>",
    "<th>",
    "</th>",
    "</li>",
    "<ol>",
    "<dl>",
    "<dt>",
    "<dd>",
    "<hr>",
    "<input type=hidden>",
    "<input>",
    "<script>",
    "</script>",
    "<!--c-->",
    "<h2>",
    "</h2>",
    "</select>",
    "<optgroup>",
    "<button>",
    "</button>",
    "</head>",
    "</html>",
    "<meta name=a>",
    "<link rel=b>",
    "</pre>",
    "<object>",
    "</object>",
    "<section>",
    "</section>",
    "<nav>",
    "</nav>",
    "<address>",
    "<x-y>",
    "</x-y>",
    "<svg viewbox=1>",
    "<svg/>",
    "<html a=b>",
    "<body c=d>",
    "</br>",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20000))]
    #[test]
    fn generated_markup_builds_as_html5ever_builds_it(
        pieces in proptest::collection::vec(
            proptest::sample::select([PIECES, crate::tokenize::tests::PIECES].concat()),
            0..40,
        )
    ) {
        same_or_gave_up(&pieces.concat());
    }
}
