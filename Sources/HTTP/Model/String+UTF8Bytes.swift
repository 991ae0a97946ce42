extension String {
  /// Calls `body` with the string's UTF-8 in place. Unlike `withUTF8`, which is `mutating`
  /// and so makes every caller copy (retain and release) the string first, this borrows it:
  /// native and small strings are contiguous already; only a bridged one is copied.
  @inline(__always)
  func withUTF8Bytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
    if let result = try utf8.withContiguousStorageIfAvailable(body) { return result }
    var copy = self
    return try copy.withUTF8(body)
  }
}
