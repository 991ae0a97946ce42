/// Header names that most requests carry and that are too long for a string to hold inline
/// (more than 15 bytes): the parser gives a field with one of these names, spelled exactly so,
/// the shared string instead of allocating its name again for every request.
public struct SharedFieldNames: Sendable {
  /// By length in bytes; a slot holds the few names of that length.
  private var byLength: [[String]] = []

  public init(_ names: [String] = []) {
    for name in names {
      let length = name.utf8.count
      if byLength.count <= length {
        byLength.append(contentsOf: repeatElement([], count: length + 1 - byLength.count))
      }
      if !byLength[length].contains(name) { byLength[length].append(name) }
    }
  }

  /// The shared string for these bytes, or nil when none is spelled so.
  func name(_ bytes: UnsafeRawBufferPointer) -> String? {
    guard bytes.count < byLength.count else { return nil }
    return byLength.withUnsafeBufferPointer { slots in
      slots[bytes.count].withUnsafeBufferPointer { names in
        for i in names.indices
        where names[i].withUTF8Bytes({ $0.elementsEqual(bytes) }) {
          return names[i]
        }
        return nil
      }
    }
  }
}
