import Testing

@testable import HTTP

/// A whole request as the parser saw it.
struct Parsed {
  var head: RequestHead
  var body: [UInt8]
  var trailers: HTTPHeaders
}

/// Collects events into whole requests across any number of feeds.
struct Collector {
  var done: [Parsed] = []
  var current: Parsed?

  mutating func drain(_ parser: inout RequestParser) throws(ParseError) {
    while let event = try parser.next() {
      switch event {
      case .head(let head): current = Parsed(head: head, body: [], trailers: .init())
      case .body(let bytes): current?.body += bytes
      case .end(let trailers):
        if var request = current {
          request.trailers = trailers
          done.append(request)
        }
        current = nil
      }
    }
  }
}

func drain(_ parser: inout RequestParser) throws(ParseError) -> [Parsed] {
  var collector = Collector()
  try collector.drain(&parser)
  return collector.done
}

func parseAll(_ text: String, limits: ParserLimits = .init()) throws(ParseError) -> [Parsed] {
  var parser = RequestParser(limits: limits)
  parser.feed(Array(text.utf8))
  return try drain(&parser)
}

@Suite struct ParserTests {
  @Test func parsesASimpleGet() throws {
    let requests = try parseAll(
      "GET /v1/products?x=1 HTTP/1.1\r\nHost: example\r\nAccept: */*\r\n\r\n")
    let request = try #require(requests.first)
    #expect(requests.count == 1)
    #expect(request.head.method == .get)
    #expect(request.head.target == "/v1/products?x=1")
    #expect(request.head.minorVersion == 1)
    #expect(request.head.headers["host"] == "example")
    #expect(request.head.headers["ACCEPT"] == "*/*")
    #expect(request.head.isKeepAlive)
    #expect(request.head.framing == .none)
  }

  @Test func keepAliveFollowsVersionAndConnectionHeader() throws {
    #expect(try parseAll("GET / HTTP/1.0\r\n\r\n")[0].head.isKeepAlive == false)
    #expect(try parseAll("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n")[0].head.isKeepAlive)
    #expect(
      try parseAll("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")[0].head.isKeepAlive
        == false)
    #expect(
      try parseAll("GET / HTTP/1.1\r\nHost: a\r\nConnection: foo, Close\r\n\r\n")[0].head
        .isKeepAlive == false)
  }

  @Test func trimsOptionalWhitespaceAroundValues() throws {
    let request = try parseAll("GET / HTTP/1.1\r\nHost:a\r\nX-A: \t spaced out \t\r\n\r\n")[0]
    #expect(request.head.headers["x-a"] == "spaced out")
    #expect(request.head.headers["host"] == "a")
  }

  @Test func readsAContentLengthBody() throws {
    let request = try parseAll("POST /o HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello")[0]
    #expect(request.head.framing == .length(5))
    #expect(request.body == Array("hello".utf8))
  }

  @Test func acceptsIdenticalDuplicateContentLength() throws {
    let request = try parseAll(
      "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nContent-Length: 2, 2\r\n\r\nhi")[0]
    #expect(request.body == Array("hi".utf8))
  }

  @Test func ignoresEmptyLinesBeforeTheRequestLine() throws {
    let requests = try parseAll("\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n")
    #expect(requests.count == 1)
  }

  /// The status the parser fails with on these bytes, nil while it is still waiting for more.
  func failure(after feeds: [[UInt8]]) -> Int? {
    var parser = RequestParser()
    do {
      for bytes in feeds {
        parser.feed(bytes)
        _ = try drain(&parser)
      }
      return nil
    } catch {
      return error.status
    }
  }

  /// Header values are compared and hashed by canonical equivalence later (Connection, Expect,
  /// If-None-Match, the app's own headers): one with a long run of combining marks is refused
  /// here, in linear time, before any of that costs quadratic time on the event loop.
  @Test func refusesAHeaderValueWithALongRunOfCombiningMarks() throws {
    let marks =
      "a" + String(repeating: "\u{301}", count: 2_000) + String(repeating: "\u{316}", count: 2_000)
    #expect(throws: ParseError.self) {
      _ = try parseAll("GET / HTTP/1.1\r\nHost: x\r\nConnection: \(marks)\r\n\r\n")
    }
    let accented = try parseAll("GET / HTTP/1.1\r\nHost: x\r\nX-Name: cafe\u{301}\r\n\r\n")
    #expect(accented.count == 1)
  }

  @Test func failsAtOnceOnAFirstByteThatCannotBeginAMethod() {
    // The first bytes of a TLS ClientHello: handshake record 0x16, version 3.1, length.
    #expect(failure(after: [[0x16, 0x03, 0x01, 0x00, 0xC8]]) == 400)
    #expect(failure(after: [[0x16]]) == 400)
    #expect(failure(after: [Array("\r\n\r\n".utf8), [0x16]]) == 400)
    #expect(failure(after: [[0x0D, 0x0A, 0x0D], [0x0A, 0x16]]) == 400)
    #expect(failure(after: [Array(" GET".utf8)]) == 400)
    #expect(failure(after: [[0x0D, 0x58]]) == 400)
    #expect(failure(after: [[0x00]]) == 400)
    #expect(failure(after: [[0x80]]) == 400)
  }

  @Test func waitsOnAFirstByteThatCanBeginAMethodOrAnEmptyLine() {
    #expect(failure(after: [Array("G".utf8)]) == nil)
    #expect(failure(after: [Array("~".utf8)]) == nil)
    #expect(failure(after: [Array("\r".utf8)]) == nil)
    #expect(failure(after: [Array("\r\n".utf8), Array("P".utf8)]) == nil)
  }

  @Test func checksTheFirstByteOfEachPipelinedRequest() {
    #expect(failure(after: [Array("GET / HTTP/1.1\r\nHost: a\r\n\r\n".utf8) + [0x16]]) == 400)
  }

  @Test func acceptsAbsoluteFormAndAsteriskForOptions() throws {
    #expect(
      try parseAll("GET http://a/b?c HTTP/1.1\r\nHost: a\r\n\r\n")[0].head.target == "http://a/b?c")
    #expect(try parseAll("OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n")[0].head.method == .options)
  }

  @Test func acceptsAnyTokenAsAMethodAndSharesTheRoutedOnes() throws {
    let trace = try parseAll("TRACE / HTTP/1.1\r\nHost: a\r\n\r\n")[0].head
    #expect(trace.method.rawValue == "TRACE")
    #expect(try parseAll("FOO~1 /x HTTP/1.1\r\nHost: a\r\n\r\n")[0].head.method.rawValue == "FOO~1")
    #expect(try parseAll("get / HTTP/1.1\r\nHost: a\r\n\r\n")[0].head.method != .get)
    #expect(try parseAll("CONNECT /v1 HTTP/1.1\r\nHost: a\r\n\r\n")[0].head.target == "/v1")
    #expect(try parseAll("DELETE / HTTP/1.1\r\nHost: a\r\n\r\n")[0].head.method == .delete)
  }

  @Test func flagsExpectContinue() throws {
    let request = try parseAll(
      "PUT / HTTP/1.1\r\nHost: a\r\nExpect: 100-Continue\r\nContent-Length: 1\r\n\r\nx")[0]
    #expect(request.head.expectsContinue)
  }

  @Test func ignoresExpectContinueFromHTTP10() throws {
    let request = try parseAll(
      "PUT / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\nx")[0]
    #expect(!request.head.expectsContinue)
  }

  static let chunked =
    "POST /upload HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
    + "5;name=value\r\nhello\r\n1\r\n \r\nA\r\n0123456789\r\n0\r\nX-Checksum: abc\r\nX-Other: 1\r\n\r\n"

  @Test func decodesChunkedBodiesWithExtensionsAndTrailers() throws {
    let request = try parseAll(Self.chunked)[0]
    #expect(request.head.framing == .chunked)
    #expect(String(decoding: request.body, as: UTF8.self) == "hello 0123456789")
    #expect(request.trailers["x-checksum"] == "abc")
    #expect(request.trailers["X-Other"] == "1")
  }

  @Test func decodesChunkedBodiesSplitAtEveryByteBoundary() throws {
    let bytes = Array(Self.chunked.utf8)
    for split in 0...bytes.count {
      var parser = RequestParser()
      var collector = Collector()
      parser.feed(bytes[..<split])
      try collector.drain(&parser)
      parser.feed(bytes[split...])
      try collector.drain(&parser)
      let requests = collector.done
      #expect(requests.count == 1, "split at \(split)")
      #expect(String(decoding: requests.first?.body ?? [], as: UTF8.self) == "hello 0123456789")
      #expect(requests.first?.trailers["x-checksum"] == "abc")
    }
  }

  @Test func parsesHeadsFedOneByteAtATime() throws {
    var parser = RequestParser()
    var collector = Collector()
    for byte in Array(Self.chunked.utf8) {
      parser.feed([byte])
      try collector.drain(&parser)
    }
    let requests = collector.done
    #expect(requests.count == 1)
    #expect(String(decoding: requests[0].body, as: UTF8.self) == "hello 0123456789")
  }

  @Test func yieldsPipelinedRequestsInOrder() throws {
    let requests = try parseAll(
      "GET /1 HTTP/1.1\r\nHost: a\r\n\r\n"
        + "POST /2 HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc"
        + "GET /3 HTTP/1.1\r\nHost: a\r\n\r\n")
    #expect(requests.map(\.head.target) == ["/1", "/2", "/3"])
    #expect(requests[1].body == Array("abc".utf8))
  }

  @Test func waitsForTheRestOfAPartialHead() throws {
    var parser = RequestParser()
    parser.feed(Array("GET / HTTP/1.1\r\nHost: a\r\n".utf8))
    #expect(try parser.next() == nil)
    #expect(parser.hasPartialHead)
    parser.feed(Array("\r\n".utf8))
    guard case .head = try parser.next() else {
      Issue.record("expected a head")
      return
    }
  }

  @Test func keepsFailingAfterAnError() {
    var parser = RequestParser()
    parser.feed(Array("GET / HTTP/1.1\nHost: a\n\n".utf8))
    #expect(throws: ParseError.self) { try parser.next() }
    parser.feed(Array("GET / HTTP/1.1\r\nHost: a\r\n\r\n".utf8))
    #expect(throws: ParseError.self) { try parser.next() }
  }

  @Test(arguments: MalformedCorpus.cases)
  func rejectsMalformedRequest(_ sample: MalformedCorpus.Case) {
    var parser = RequestParser(limits: MalformedCorpus.limits)
    parser.feed(sample.bytes)
    do {
      _ = try drain(&parser)
      Issue.record("\(sample.name): accepted, expected \(sample.status)")
    } catch {
      #expect(error.status == sample.status, "\(sample.name): \(error)")
    }
  }

  @Test func corpusIsLargeEnough() {
    #expect(MalformedCorpus.cases.count >= 40)
  }
}

@Suite struct SharedFieldNamesTests {
  @Test func aSharedNameParsesToTheSameTextAndOthersAreUntouched() throws {
    var limits = ParserLimits()
    limits.sharedFieldNames = SharedFieldNames([
      "Storekeeper-Storefront", "Storekeeper-App-Version",
    ])
    let requests = try parseAll(
      "GET / HTTP/1.1\r\nHost: x\r\nStorekeeper-Storefront: DEU\r\n"
        + "storekeeper-app-version: 2.4.1\r\nStorekeeper-App-Versions: 1\r\n\r\n",
      limits: limits)
    let headers = try #require(requests.first).head.headers
    #expect(
      headers.map(\.name) == [
        "Host", "Storekeeper-Storefront", "storekeeper-app-version", "Storekeeper-App-Versions",
      ], "names as sent, whatever their case")
    #expect(headers["storekeeper-storefront"] == "DEU")
    #expect(headers["Storekeeper-App-Version"] == "2.4.1")
    #expect(
      SharedFieldNames(["a", "bc"]).name(UnsafeRawBufferPointer(start: nil, count: 0)) == nil)
  }
}

@Suite struct PathParametersTests {
  @Test func findsEachNameAndTheLastValueGivenForIt() {
    var parameters = PathParameters()
    #expect(parameters["id"] == nil && parameters.count == 0)
    parameters.add("id", "1")
    parameters.add("kind", "k")
    parameters.add("more", "m")
    parameters.add("kind", "k2")
    #expect(parameters["id"] == "1" && parameters["kind"] == "k2" && parameters["more"] == "m")
    #expect(parameters["ID"] == nil, "names are the pattern's, compared exactly")
    #expect(parameters.count == 3)
    let literal: PathParameters = ["trade_no": "T1"]
    #expect(literal["trade_no"] == "T1" && literal.count == 1)
  }
}
