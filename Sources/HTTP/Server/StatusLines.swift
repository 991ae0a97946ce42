/// "HTTP/1.1 <status> <reason>\r\n" for every status 100–599, built once into memory that is
/// never freed. Raw pointers carry no reference count, so the loops read a line without the
/// retain and release an array of arrays cost on every response.
struct StatusLines: @unchecked Sendable {
  static let shared = StatusLines()

  private let bytes: UnsafeMutableRawPointer
  /// Start of each status's line in `bytes`, indexed by status - 100; one more at the end.
  private let offsets: UnsafeMutablePointer<Int>

  private init() {
    let lines = (100..<600).map { Array("HTTP/1.1 \($0) \(HTTPStatus.reason($0))\r\n".utf8) }
    bytes = .allocate(byteCount: lines.reduce(0) { $0 + $1.count }, alignment: 1)
    offsets = .allocate(capacity: lines.count + 1)
    var offset = 0
    for (i, line) in lines.enumerated() {
      offsets[i] = offset
      UnsafeMutableRawBufferPointer(start: bytes + offset, count: line.count).copyBytes(from: line)
      offset += line.count
    }
    offsets[lines.count] = offset
  }

  /// The line of `status`, which must be in 100..<600.
  func line(_ status: Int) -> UnsafeRawBufferPointer {
    let i = status - 100
    return UnsafeRawBufferPointer(start: bytes + offsets[i], count: offsets[i + 1] - offsets[i])
  }
}
