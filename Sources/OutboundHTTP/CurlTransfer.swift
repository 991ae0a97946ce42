import Foundation
import CCurl
import Synchronization

/// One request as libcurl runs it: the easy handle and the C memory it points at (header list,
/// error buffer) are owned here and freed in `deinit`. After `CurlLoop` adds it to its multi
/// handle, the answer being collected is touched only by the loop's thread; the caller's
/// continuation is resumed exactly once, by whichever of completion or cancellation comes first.
final class CurlTransfer: @unchecked Sendable {
  let handle: UnsafeMutableRawPointer
  private var headerList: UnsafeMutablePointer<curl_slist>?
  private let errorBuffer: UnsafeMutablePointer<CChar>
  private let maxBody: Int
  private let waiter = Mutex<CheckedContinuation<OutboundHTTPAnswer, any Error>?>(nil)

  private var status = 0
  private var headers: [String: String] = [:]
  private var body: [UInt8] = []
  /// The answer's body reached `maxBody`: the rest was refused, which ends the transfer.
  private var truncated = false

  /// A handle set up for `request`; throws if libcurl refuses an option (an unsupported
  /// scheme, no memory).
  init(_ request: OutboundRequest, maxBody: Int) throws {
    guard let handle = curl_easy_init() else { throw CurlError(code: CURLE_OUT_OF_MEMORY) }
    self.handle = handle
    self.maxBody = maxBody
    errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
    errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
    try configure(request)
  }

  deinit {
    curl_easy_cleanup(handle)
    curl_slist_free_all(headerList)
    errorBuffer.deallocate()
  }

  private func configure(_ request: OutboundRequest) throws {
    let context = Unmanaged.passUnretained(self).toOpaque()
    try check(sk_curl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer))
    try check(sk_curl_setopt_pointer(handle, CURLOPT_URL, request.url))
    // Only the web's schemes, and no redirects: a 3xx is an answer like any other, so a peer
    // cannot bounce a signed request elsewhere (or to file://).
    try check(sk_curl_setopt_pointer(handle, CURLOPT_PROTOCOLS_STR, "http,https"))
    try check(sk_curl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0))
    // No signals from a resolver timeout in a multithreaded server.
    try check(sk_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1))
    let milliseconds = Self.milliseconds(request.timeout)
    try check(sk_curl_setopt_long(handle, CURLOPT_TIMEOUT_MS, milliseconds))
    try check(sk_curl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, milliseconds))
    if let body = request.body {
      try check(sk_curl_setopt_offset(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)))
      try body.withUnsafeBytes { bytes in
        // Copied by libcurl, so the request's bytes need not outlive this call; an empty body
        // still needs a valid pointer.
        let start = bytes.baseAddress ?? UnsafeRawPointer(errorBuffer)
        try check(sk_curl_setopt_pointer(handle, CURLOPT_COPYPOSTFIELDS, start))
      }
      if request.method != "POST" {
        try check(sk_curl_setopt_pointer(handle, CURLOPT_CUSTOMREQUEST, request.method))
      }
    } else if request.method != "GET" {
      try check(sk_curl_setopt_pointer(handle, CURLOPT_CUSTOMREQUEST, request.method))
    }
    // "Expect:" off: libcurl would otherwise hold a body over 1 KiB for a 100-continue the
    // peer may never send.
    for line in request.headers.map({ "\($0.0): \($0.1)" }) + ["Expect:"] {
      guard let appended = curl_slist_append(headerList, line) else {
        throw CurlError(code: CURLE_OUT_OF_MEMORY)
      }
      headerList = appended
    }
    try check(sk_curl_setopt_pointer(handle, CURLOPT_HTTPHEADER, headerList))
    try check(sk_curl_setopt_write(handle, CURLOPT_WRITEFUNCTION, curlWrite))
    try check(sk_curl_setopt_pointer(handle, CURLOPT_WRITEDATA, context))
    try check(sk_curl_setopt_write(handle, CURLOPT_HEADERFUNCTION, curlHeader))
    try check(sk_curl_setopt_pointer(handle, CURLOPT_HEADERDATA, context))
  }

  private func check(_ code: CURLcode) throws {
    guard code == CURLE_OK else { throw CurlError(code: code) }
  }

  /// At least 1 ms: libcurl reads 0 as "no deadline".
  private static func milliseconds(_ timeout: Duration) -> Int {
    let (seconds, attoseconds) = timeout.components
    let total = seconds.multipliedReportingOverflow(by: 1000)
    guard !total.overflow else { return Int.max }
    return max(1, Int(total.partialValue) + Int(attoseconds / 1_000_000_000_000_000))
  }

  // MARK: the caller's side

  func wait(_ continuation: CheckedContinuation<OutboundHTTPAnswer, any Error>) {
    waiter.withLock { $0 = continuation }
  }

  /// Whether the caller still waits (not yet answered, nor cancelled).
  var isWaiting: Bool { waiter.withLock { $0 != nil } }

  /// Resumes the caller unless it was already; true if this call did.
  @discardableResult
  func resume(_ result: Result<OutboundHTTPAnswer, any Error>) -> Bool {
    guard let continuation = waiter.withLock({ $0.take() }) else { return false }
    continuation.resume(with: result)
    return true
  }

  // MARK: the loop's side

  /// What the finished transfer brought: its answer, or why there was none.
  func outcome(_ code: CURLcode) -> Result<OutboundHTTPAnswer, any Error> {
    if code == CURLE_OK || (code == CURLE_WRITE_ERROR && truncated) {
      var responseCode = 0
      _ = sk_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &responseCode)
      let finalStatus = responseCode > 0 ? responseCode : status
      guard finalStatus > 0 else { return .failure(OutboundHTTPError.notHTTP) }
      return .success(OutboundHTTPAnswer(status: finalStatus, headers: headers, body: body))
    }
    if code == CURLE_OPERATION_TIMEDOUT { return .failure(OutboundHTTPError.deadlinePassed) }
    // The same code as a scheme refused, but after the request went out: the peer answered
    // with something that is not HTTP/1.0 or later.
    var sent = 0
    if code == CURLE_UNSUPPORTED_PROTOCOL,
      sk_curl_getinfo_long(handle, CURLINFO_REQUEST_SIZE, &sent) == CURLE_OK, sent > 0
    {
      return .failure(OutboundHTTPError.notHTTP)
    }
    let detail = String(cString: errorBuffer)
    return .failure(OutboundHTTPError.failed(CurlError(code: code, detail: detail)))
  }

  fileprivate func take(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    let room = maxBody - body.count
    body.append(contentsOf: bytes.prefix(room))
    if bytes.count > room {
      truncated = true
      return false
    }
    return true
  }

  /// One header line of an answer; a status line starts a new answer (after a 1xx), so only
  /// the final answer's fields are kept. Bounded like the body.
  fileprivate func header(_ bytes: UnsafeBufferPointer<UInt8>) {
    let line = String(decoding: bytes, as: UTF8.self)
    if line.hasPrefix("HTTP/") {
      headers = [:]
      let parts = line.split(separator: " ", maxSplits: 2)
      status = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
      return
    }
    guard let colon = line.firstIndex(of: ":"), headers.count < 100 else { return }
    let name = line[..<colon].lowercased()
    let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespacesAndNewlines)
    headers[name] = String(value.prefix(8192))
  }
}

/// libcurl's write callback: a short count refuses the rest and ends the transfer.
private let curlWrite: curl_write_callback = { pointer, size, count, context in
  guard let pointer, let context else { return 0 }
  let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
  let length = size * count
  let bytes = UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self)
  return transfer.take(UnsafeBufferPointer(start: bytes, count: length)) ? length : 0
}

private let curlHeader: curl_write_callback = { pointer, size, count, context in
  guard let pointer, let context else { return 0 }
  let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
  let length = size * count
  let bytes = UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self)
  transfer.header(UnsafeBufferPointer(start: bytes, count: length))
  return length
}
