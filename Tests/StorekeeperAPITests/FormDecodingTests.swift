import Testing

@testable import StorekeeperAPI
@testable import StorekeeperCore

@Suite struct FormDecodingTests {
  @Test func decodesPercentEncodingAndPlus() {
    let fields = FormDecoding.decode(Array("a=1%202&b=x+y&c=&d".utf8))
    #expect(fields == ["a": "1 2", "b": "x y", "c": "", "d": ""])
  }

  @Test func keepsUnencodedBase64ExceptThatPlusBecomesSpace() {
    // Seed 000 posts the receipt without percent-encoding.
    let fields = FormDecoding.decode(Array("receipt=ab+c/d==&id=com.example.app.42".utf8))
    #expect(fields["receipt"] == "ab c/d==")
    #expect(fields["id"] == "com.example.app.42")
  }

  @Test func toleratesTruncatedEscapes() {
    #expect(FormDecoding.decode(Array("a=%4".utf8)) == ["a": "%4"])
    #expect(FormDecoding.decode(Array("a=%zz".utf8)) == ["a": "%zz"])
  }
}
