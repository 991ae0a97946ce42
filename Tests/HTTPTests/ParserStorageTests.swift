import Testing

@testable import HTTP

/// The parser gives back storage grown for a large body once nothing is buffered, and never
/// what a request still needs.
@Suite struct ParserStorageTests {
  static let head = "POST /x HTTP/1.1\r\nHost: test\r\nContent-Length: 60000\r\n\r\n"

  @Test func storageGrownForABodyIsGivenBackOnceAllIsConsumed() throws {
    var parser = RequestParser()
    parser.feed(Array(Self.head.utf8) + [UInt8](repeating: 0x61, count: 60_000))
    let requests = try drain(&parser)
    #expect(requests.first?.body.count == 60_000)
    #expect(parser.storageCapacity >= 60_000)
    parser.releaseStorage(keepingAtMost: 4096)
    #expect(parser.storageCapacity <= 4096)
    // The next request parses as before.
    parser.feed(Array("GET /y HTTP/1.1\r\nHost: test\r\n\r\n".utf8))
    #expect(try drain(&parser).first?.head.target == "/y")
  }

  @Test func bufferedBytesAreNeverGivenBack() throws {
    var parser = RequestParser()
    let pipelined = "GET /a HTTP/1.1\r\nHost: test\r\n\r\n" + String(repeating: "x", count: 5000)
    parser.feed(Array(pipelined.utf8))
    guard case .head? = try parser.next() else {
      Issue.record("no head")
      return
    }
    let held = parser.bufferedByteCount
    parser.releaseStorage(keepingAtMost: 4096)
    #expect(parser.bufferedByteCount == held)
    #expect(parser.storageCapacity >= held)
  }
}
