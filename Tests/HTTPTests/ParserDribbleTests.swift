import Testing

@testable import HTTP

/// A client may send its request one byte per segment. The parser must then do the work of one
/// read, not rescan what it already checked on every read (quadratic in the head), and a
/// chunked body must not turn the body limit into six times as many bytes and events.
@Suite struct ParserDribbleTests {
  static let longHead =
    "GET /v1/products HTTP/1.1\r\nHost: a\r\nX-Long: " + String(repeating: "v", count: 12_000)
    + "\r\nAccept: */*\r\n"

  @Test func aHeadFedByteByByteIsLookedAtOnce() throws {
    var parser = RequestParser()
    let bytes = Array(Self.longHead.utf8)
    for byte in bytes {
      parser.feed([byte])
      #expect(try parser.next() == nil)
    }
    #expect(parser.headScan.bytesExamined == bytes.count)
    parser.feed(Array("\r\n".utf8))
    guard case .head(let head) = try parser.next() else {
      Issue.record("expected the head")
      return
    }
    #expect(head.headers["x-long"]?.count == 12_000)
    #expect(head.headers["accept"] == "*/*")
  }

  @Test func anOverlongTargetDribbledIsRefusedAsSoonAsItPassesTheLimit() {
    var parser = RequestParser(limits: ParserLimits(maxTargetBytes: 100))
    var fed = 0
    do {
      for byte in Array(("GET /" + String(repeating: "a", count: 500)).utf8) {
        parser.feed([byte])
        fed += 1
        _ = try parser.next()
      }
      Issue.record("an overlong target was not refused")
    } catch {
      #expect(error == .targetTooLong)
      // "GET " and a target of 101 bytes.
      #expect(fed == 4 + 101)
    }
    #expect(parser.headScan.bytesExamined <= fed)
  }

  @Test func emptyLinesAndALineFeedSplitFromItsReturnAreJudgedAcrossReads() throws {
    var collector = Collector()
    var parser = RequestParser()
    for byte in Array("\r\n\r\nGET /x HTTP/1.1\r\nHost: a\r\n\r\n".utf8) {
      parser.feed([byte])
      try collector.drain(&parser)
    }
    #expect(collector.done.map(\.head.target) == ["/x"])

    var other = RequestParser()
    other.feed(Array("\r".utf8))
    #expect(try other.next() == nil)
    other.feed(Array("G".utf8))
    #expect(throws: ParseError.notARequest) { try other.next() }
  }

  @Test func aChunkSizeLineDribbledIsScannedFromWhereTheLastReadStopped() throws {
    var parser = RequestParser()
    parser.feed(Array("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n".utf8))
    guard case .head = try parser.next() else {
      Issue.record("expected the head")
      return
    }
    let sizeLine = Array(("3;" + String(repeating: "e", count: 900)).utf8)
    for byte in sizeLine {
      parser.feed([byte])
      #expect(try parser.next() == nil)
      #expect(parser.lineScanned == parser.bufferedByteCount)
    }
    var body: [UInt8] = []
    parser.feed(Array("\r\nabc\r\n0\r\n\r\n".utf8))
    while let event = try parser.next() {
      if case .body(let bytes) = event { body += bytes }
    }
    #expect(body == Array("abc".utf8))
    #expect(parser.lineScanned == 0)
  }

  /// One-byte chunks cost six bytes and an event each: the limit counts what is on the wire.
  @Test func aChunkedBodyCountsItsFramingTowardTheBodyLimit() throws {
    let head = "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
    let oneByteChunks = String(repeating: "1\r\nx\r\n", count: 100) + "0\r\n\r\n"
    #expect(throws: ParseError.bodyTooLarge) {
      try parseAll(head + oneByteChunks, limits: ParserLimits(maxBodyBytes: 300))
    }
    let accepted = try parseAll(head + oneByteChunks, limits: ParserLimits(maxBodyBytes: 603))
    #expect(accepted.first?.body.count == 100)
    #expect(throws: ParseError.bodyTooLarge) {
      try parseAll(head + oneByteChunks, limits: ParserLimits(maxBodyBytes: 602))
    }
    let oneChunk = "64\r\n" + String(repeating: "x", count: 100) + "\r\n0\r\n\r\n"
    #expect(try parseAll(head + oneChunk, limits: ParserLimits(maxBodyBytes: 109)).count == 1)
  }
}
