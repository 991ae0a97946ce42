import COpenSSL

/// Random words from OpenSSL's CSPRNG (a DRBG the library seeds and reseeds from the kernel),
/// drawn many at a time. `SystemRandomNumberGenerator` makes one getrandom(2) call per eight
/// bytes: a new order (its trade number and account token) took five, more than half the
/// system calls the server made per order.
package struct SecureRandom: RandomNumberGenerator {
  private var words: [UInt64]
  private var index: Int

  /// `count` words are drawn in one call when the first is needed, and again when they run
  /// out.
  package init(words count: Int) {
    words = Array(repeating: 0, count: max(1, count))
    index = words.count
  }

  package mutating func next() -> UInt64 {
    if index == words.count { refill() }
    defer { index += 1 }
    return words[index]
  }

  private mutating func refill() {
    let drawn = words.withUnsafeMutableBytes { raw -> Bool in
      guard let base = raw.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return false }
      return RAND_bytes(base, Int32(raw.count)) == 1
    }
    if !drawn {
      // OpenSSL could not seed itself: the kernel's generator, a word at a time, as before.
      var system = SystemRandomNumberGenerator()
      for i in words.indices { words[i] = system.next() }
    }
    index = 0
  }
}
