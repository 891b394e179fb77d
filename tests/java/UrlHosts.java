// The host Java's java.net.URL reads, one URL a line (UTF-8 bytes in hex, so any byte passes),
// printed in hex too: the host lower-cased (Locale.ROOT), or "!" and the exception's class.
// Used by tests/trust.rs to compare Java's reading of hostile host spellings with dedust's.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.Locale;

public class UrlHosts {
    public static void main(String[] args) throws Exception {
        BufferedReader in =
                new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        HexFormat hex = HexFormat.of();
        String line;
        while ((line = in.readLine()) != null) {
            String url = new String(hex.parseHex(line.trim()), StandardCharsets.UTF_8);
            String host;
            try {
                host = new URL(url).getHost().toLowerCase(Locale.ROOT);
            } catch (Exception e) {
                host = "!" + e.getClass().getSimpleName();
            }
            System.out.println(hex.formatHex(host.getBytes(StandardCharsets.UTF_8)));
        }
    }
}
