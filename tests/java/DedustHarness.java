// Applies an exported rule file the way the crawler does, to URLs read from stdin (one per line),
// printing one output line per input line. Compiled and run by tests/export.rs.
//
//   java DedustHarness nutch FILE LOOPS     regex-normalize.xml as Nutch's urlnormalizer-regex
//                                           does: every <regex> in file order with
//                                           Pattern.matcher(url).replaceAll(substitution), the
//                                           whole list repeated until a pass changes nothing, at
//                                           most LOOPS times (urlnormalizer.loop.count)
//   java DedustHarness stormcrawler FILE    urlfilters.json: the inline urlNormalizers list of
//                                           RegexURLNormalizer, once, with replaceAll
//   java DedustHarness heritrix FILE        crawler-beans fragment: each RegexRule once, in order:
//                                           if matcher.matches(), appendReplacement(format)
//   java DedustHarness wellformed FILE...   parses each file with javax.xml.parsers, DOM and SAX,
//                                           namespace-aware, any warning or error fatal; prints
//                                           "well-formed FILE" for each, exits 1 at the first that
//                                           is not

import java.io.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;
import java.util.regex.*;
import javax.xml.parsers.DocumentBuilder;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.parsers.SAXParserFactory;
import org.w3c.dom.*;
import org.xml.sax.ErrorHandler;
import org.xml.sax.SAXParseException;
import org.xml.sax.helpers.DefaultHandler;

public class DedustHarness {
    static final class Rule {
        final Pattern pattern;
        final String replacement;
        Rule(String p, String r) { pattern = Pattern.compile(p); replacement = r; }
    }

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        if (mode.equals("wellformed")) {
            for (int i = 1; i < args.length; i++) {
                try {
                    wellformed(Paths.get(args[i]));
                } catch (SAXParseException e) {
                    System.err.println("malformed " + args[i] + " line " + e.getLineNumber() + " column " + e.getColumnNumber() + ": " + e.getMessage());
                    System.exit(1);
                }
                System.out.println("well-formed " + args[i]);
            }
            return;
        }
        Path file = Paths.get(args[1]);
        List<Rule> rules;
        int loops = 1;
        switch (mode) {
            case "nutch": rules = nutch(file); loops = Integer.parseInt(args[2]); break;
            case "stormcrawler": rules = storm(new String(Files.readAllBytes(file), StandardCharsets.UTF_8)); break;
            case "heritrix": rules = heritrix(file); break;
            default: throw new IllegalArgumentException("mode " + mode);
        }
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8), 1 << 16);
        PrintWriter out = new PrintWriter(new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), 1 << 16));
        String line;
        while ((line = in.readLine()) != null) {
            String url = line;
            if (mode.equals("heritrix")) {
                for (Rule r : rules) {
                    Matcher m = r.pattern.matcher(url);
                    if (m.matches()) {
                        StringBuffer b = new StringBuffer(url.length() * 2);
                        m.appendReplacement(b, r.replacement);
                        url = b.toString();
                    }
                }
            } else {
                // URLNormalizers.normalize: loop while a pass changes the URL.
                String before = url;
                for (int k = 0; k < loops; k++) {
                    for (Rule r : rules) url = r.pattern.matcher(url).replaceAll(r.replacement);
                    if (before.equals(url)) break;
                    before = url;
                }
            }
            out.println(url);
        }
        out.flush();
    }

    // Any warning or error (not only a fatal one) fails the parse.
    static final ErrorHandler STRICT = new ErrorHandler() {
        public void warning(SAXParseException e) throws SAXParseException { throw e; }
        public void error(SAXParseException e) throws SAXParseException { throw e; }
        public void fatalError(SAXParseException e) throws SAXParseException { throw e; }
    };

    // The file as a DOM (what Nutch and Spring, for Heritrix, build) and as a SAX stream.
    static void wellformed(Path file) throws Exception {
        DocumentBuilderFactory dbf = DocumentBuilderFactory.newInstance();
        dbf.setNamespaceAware(true);
        DocumentBuilder db = dbf.newDocumentBuilder();
        db.setErrorHandler(STRICT);
        db.parse(file.toFile());
        SAXParserFactory spf = SAXParserFactory.newInstance();
        spf.setNamespaceAware(true);
        DefaultHandler h = new DefaultHandler() {
            @Override public void warning(SAXParseException e) throws SAXParseException { throw e; }
            @Override public void error(SAXParseException e) throws SAXParseException { throw e; }
            @Override public void fatalError(SAXParseException e) throws SAXParseException { throw e; }
        };
        spf.newSAXParser().parse(file.toFile(), h);
    }

    // As RegexURLNormalizer.readConfiguration: <regex> children with <pattern> and <substitution>,
    // each read as the data of its first child node (a text split in several nodes reads cut).
    static List<Rule> nutch(Path file) throws Exception {
        Document doc = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(file.toFile());
        List<Rule> rules = new ArrayList<>();
        NodeList regexes = doc.getDocumentElement().getChildNodes();
        for (int i = 0; i < regexes.getLength(); i++) {
            if (!(regexes.item(i) instanceof Element)) continue;
            Element regex = (Element) regexes.item(i);
            String pattern = null, sub = null;
            NodeList fields = regex.getChildNodes();
            for (int j = 0; j < fields.getLength(); j++) {
                if (!(fields.item(j) instanceof Element)) continue;
                Element f = (Element) fields.item(j);
                if (f.getTagName().equals("pattern") && f.hasChildNodes()) pattern = ((Text) f.getFirstChild()).getData();
                if (f.getTagName().equals("substitution") && f.hasChildNodes()) sub = ((Text) f.getFirstChild()).getData();
                if (!f.hasChildNodes()) sub = "";
            }
            if (pattern != null && sub != null) rules.add(new Rule(pattern, sub));
        }
        return rules;
    }

    static List<Rule> heritrix(Path file) throws Exception {
        Document doc = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(file.toFile());
        List<Rule> rules = new ArrayList<>();
        NodeList beans = doc.getElementsByTagName("bean");
        for (int i = 0; i < beans.getLength(); i++) {
            Element bean = (Element) beans.item(i);
            if (!bean.getAttribute("class").equals("org.archive.modules.canonicalize.RegexRule")) continue;
            String regex = null, format = null;
            NodeList props = bean.getElementsByTagName("property");
            for (int j = 0; j < props.getLength(); j++) {
                Element p = (Element) props.item(j);
                if (p.getAttribute("name").equals("regex")) regex = p.getAttribute("value");
                if (p.getAttribute("name").equals("format")) format = p.getAttribute("value");
            }
            rules.add(new Rule(regex, format));
        }
        return rules;
    }

    // The urlNormalizers array of the JSON fragment: objects with "pattern" and "substitution".
    static List<Rule> storm(String json) {
        List<String> strings = new ArrayList<>();
        for (int i = 0; i < json.length(); i++) {
            if (json.charAt(i) != '"') continue;
            StringBuilder s = new StringBuilder();
            for (i++; json.charAt(i) != '"'; i++) {
                char c = json.charAt(i);
                if (c == '\\') {
                    char e = json.charAt(++i);
                    switch (e) {
                        case 'n': s.append('\n'); break;
                        case 't': s.append('\t'); break;
                        case 'r': s.append('\r'); break;
                        case 'b': s.append('\b'); break;
                        case 'f': s.append('\f'); break;
                        case 'u': s.append((char) Integer.parseInt(json.substring(i + 1, i + 5), 16)); i += 4; break;
                        default: s.append(e);
                    }
                } else s.append(c);
            }
            strings.add(s.toString());
        }
        List<Rule> rules = new ArrayList<>();
        for (int i = 0; i + 3 < strings.size(); i++) {
            if (strings.get(i).equals("pattern") && strings.get(i + 2).equals("substitution")) {
                rules.add(new Rule(strings.get(i + 1), strings.get(i + 3)));
                i += 3;
            }
        }
        return rules;
    }
}
