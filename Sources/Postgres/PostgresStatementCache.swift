/// The named prepared statements of one session, by SQL text, least recently used first out.
///
/// Parameters are sent untyped, so PostgreSQL infers their types from the SQL text alone: the
/// text is the whole key. Not thread-safe: it lives on its connection's serial queue.
struct PostgresStatementCache {
  struct Lookup {
    /// The statement's name on the server.
    var name: String
    /// False when the statement must be prepared before it can run.
    var isPrepared: Bool
    /// A statement pushed out to make room: deallocate it on the server.
    var evicted: String?
  }

  private struct Entry {
    var name: String
    var lastUse: UInt64
  }

  let capacity: Int
  private var entries: [String: Entry] = [:]
  private var clock: UInt64 = 0
  private var nextNumber = 0

  init(capacity: Int) {
    self.capacity = max(0, capacity)
  }

  var isEnabled: Bool { capacity > 0 }
  var count: Int { entries.count }

  /// The name to run `sql` under, naming (and making room for) it when it is new. A new name
  /// counts as prepared only after `didPrepare(_:)`.
  mutating func lookup(_ sql: String) -> Lookup {
    clock += 1
    if let entry = entries[sql] {
      entries[sql]?.lastUse = clock
      return Lookup(name: entry.name, isPrepared: true, evicted: nil)
    }
    nextNumber += 1
    var evicted: String?
    if entries.count >= capacity,
      let oldest = entries.min(by: { $0.value.lastUse < $1.value.lastUse })
    {
      entries[oldest.key] = nil
      evicted = oldest.value.name
    }
    return Lookup(name: "sk\(nextNumber)", isPrepared: false, evicted: evicted)
  }

  mutating func didPrepare(_ sql: String, as name: String) {
    entries[sql] = Entry(name: name, lastUse: clock)
  }

  /// Forgets `sql` (its statement failed in a way preparing again may fix); returns its name.
  mutating func forget(_ sql: String) -> String? {
    entries.removeValue(forKey: sql)?.name
  }
}
