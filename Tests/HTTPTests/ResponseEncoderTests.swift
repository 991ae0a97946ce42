import Testing

@testable import HTTP

/// The head every answer gets from the server itself, whatever the handler set.
@Suite struct ResponseEncoderTests {
  func head(_ response: Response) -> String {
    var out: [UInt8] = []
    let date = Array("Date: Tue, 01 Dec 2026 00:00:00 GMT\r\n".utf8)
    date.withUnsafeBytes { date in
      _ = ResponseEncoder.encode(
        response, requestId: "r1", date: date, headRequest: false, keepAlive: true,
        announceKeepAlive: false, into: &out)
    }
    return String(decoding: out, as: UTF8.self)
  }

  @Test func everyAnswerSaysNosniffOnce() {
    let plain = head(Response(status: 404, body: Array("no".utf8)))
    #expect(plain.contains("\r\nX-Content-Type-Options: nosniff\r\n"))
    var own = Response(status: 200)
    own.headers.add("x-content-type-options", "sniff-away")
    let written = head(own)
    #expect(written.components(separatedBy: "nosniff").count == 2, "one field, the server's")
    #expect(!written.contains("sniff-away"))
  }
}
