/// Request ids: the client's own when it is a sane token, otherwise a random one.
enum RequestID {
  /// Accepts 1–128 characters of `[A-Za-z0-9._-]`.
  static func accept(_ value: String?) -> String? {
    guard let value, !value.isEmpty, value.utf8.count <= 128 else { return nil }
    for c in value.utf8 {
      switch c {
      case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"),
        UInt8(ascii: "-"):
        continue
      default:
        return nil
      }
    }
    return value
  }

  private static let alphabet = Array(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)

  /// 15 characters from 62 (~89 bits): short enough to stay a small, allocation-free String.
  static func make(using generator: inout some RandomNumberGenerator) -> String {
    var a = generator.next()
    var b = generator.next()
    return String(unsafeUninitializedCapacity: 15) { buffer in
      for i in 0..<15 {
        let source = i < 8 ? a : b
        buffer[i] = alphabet[Int(source % 62)]
        if i < 8 { a /= 62 } else { b /= 62 }
      }
      return 15
    }
  }
}

/// wyrand: a fast, non-cryptographic generator for request ids, one per event loop and seeded
/// from the system generator, so ids cost no system call.
struct FastRandom: RandomNumberGenerator {
  private var state: UInt64

  init() {
    var system = SystemRandomNumberGenerator()
    state = system.next()
  }

  mutating func next() -> UInt64 {
    state &+= 0xa076_1d64_78bd_642f
    let product = state.multipliedFullWidth(by: state ^ 0xe703_7ed1_a0b4_28db)
    return product.high ^ product.low
  }
}
