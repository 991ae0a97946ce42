import HTTP
import Testing

@testable import StorekeeperAPI
@testable import StorekeeperCore

/// The pieces of the XML answers for seed 000's client, without sockets: escaping, the choice
/// by `Accept`, the nid rule and the rate limit of the `.xml` path. The documents themselves,
/// parsed as that client would, are in tests/e2e/test_seed_000_xml.py.
@Suite struct XMLAnswersTests {
  @Test func markupQuotesAndControlsAreEscapedOrReplaced() {
    let hostile = "a<b>&c\"d'e]]>f\u{1}g\r\nh\ti\u{FFFE}🪙"
    #expect(
      XMLWriter.escapedText(hostile)
        == "a&lt;b&gt;&amp;c\"d'e]]&gt;f\u{FFFD}g&#13;\nh\ti\u{FFFD}🪙")
    #expect(
      XMLWriter.escapedAttribute(hostile)
        == "a&lt;b&gt;&amp;c&quot;d&apos;e]]&gt;f\u{FFFD}g&#13;&#10;h&#9;i\u{FFFD}🪙")
    #expect(XMLWriter.escapedText("plain") == "plain")
    var xml = XMLWriter()
    xml.open("p", [("a", "x\"y"), ("skipped", nil)], empty: true)
    #expect(xml.text.hasSuffix(#"<p a="x&quot;y"/>"#))
  }

  @Test func acceptChoosesXMLOnlyWhenItIsNamedAndPreferred() {
    for xml in [
      "application/xml", "text/xml", "text/html;q=0.9, application/xml",
      "application/json;q=0.4, application/xml;q=0.5", "*/*;q=0.1, text/xml", "APPLICATION/XML",
    ] {
      #expect(ResponseFormat.preferred(xml) == .xml, "\(xml)")
    }
    for json in [
      nil, "", "*/*", "application/json", "application/xml, application/json",
      "application/json, application/xml", "application/xml;q=0", "application/xml;q=abc",
      "text/*", "image/png", "application/xml;q=0.5, */*",
      "application/xhtml+xml",
    ] {
      #expect(ResponseFormat.preferred(json) == .json, "\(json ?? "nil")")
    }
  }

  @Test func aNidIsWhatFollowsThePrefix() {
    let ids = StoreKitProductIds(prefix: "com.example.app.")
    #expect(ids.nid("com.example.app.1042") == "1042")
    #expect(ids.nid("com.example.app.") == nil)
    #expect(ids.nid("com.other.1042") == nil)
    #expect(StoreKitProductIds(prefix: "").nid("com.other.1042") == "com.other.1042")
  }

  @Test func theXMLReceiptPathIsLimitedLikeTheJSONOne() {
    #expect(
      RateLimitRules.scope(.post, "/v1/receipts.xml") == RateLimitRules.scope(.post, "/v1/receipts")
    )
    #expect(RateLimitRules.scope(.get, "/v1/products.xml") == .address)
  }
}
