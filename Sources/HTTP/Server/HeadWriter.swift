/// Writes a response head into raw memory the event loop owns. An array append checks the
/// array's uniqueness and capacity each time (a dozen times per head); this only compares
/// two integers. Writes past `capacity` are counted, not stored, so one pass tells the caller
/// how much room the head really needs.
struct HeadWriter {
  private let base: UnsafeMutableRawPointer?
  private let capacity: Int
  private(set) var count = 0

  init(_ buffer: UnsafeMutableRawBufferPointer) {
    base = buffer.baseAddress
    capacity = buffer.count
  }

  /// Everything written fitted in the buffer.
  var fits: Bool { count <= capacity }

  mutating func write(_ bytes: UnsafeRawBufferPointer) {
    if let base, let source = bytes.baseAddress, count + bytes.count <= capacity {
      (base + count).copyMemory(from: source, byteCount: bytes.count)
    }
    count += bytes.count
  }

  mutating func write(_ bytes: UnsafeBufferPointer<UInt8>) { write(UnsafeRawBufferPointer(bytes)) }

  mutating func write(_ text: StaticString) {
    text.withUTF8Buffer { write(UnsafeRawBufferPointer($0)) }
  }

  mutating func write(_ byte: UInt8) {
    if let base, count < capacity { base.storeBytes(of: byte, toByteOffset: count, as: UInt8.self) }
    count += 1
  }

  mutating func writeCRLF() {
    write(13)
    write(10)
  }

  mutating func writeDecimal(_ value: Int) {
    var digits = 1
    var rest = value / 10
    while rest > 0 {
      digits += 1
      rest /= 10
    }
    var v = value
    var i = count + digits - 1
    count += digits
    guard let base, count <= capacity else { return }
    repeat {
      base.storeBytes(of: UInt8(ascii: "0") + UInt8(v % 10), toByteOffset: i, as: UInt8.self)
      v /= 10
      i -= 1
    } while v > 0
  }
}
