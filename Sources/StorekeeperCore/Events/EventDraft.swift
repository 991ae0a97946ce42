/// An event a writer appends: its type and what changed. The outbox adds the id, the user's
/// sequence number, the time and the user's state.
struct EventDraft: Sendable, Equatable {
  var type: EventType
  var data: [String: JSONValue]

  init(_ type: EventType, _ data: [String: JSONValue] = [:]) {
    self.type = type
    self.data = data
  }

  /// The JSON `storekeeper_append_events` takes: `[{"type", "data"}]`, as a `jsonb`
  /// parameter (`JSONValue.parameterText`: PostgreSQL keeps its own key order, and the numbers
  /// writers put in event data are integers they formatted themselves).
  static func json(_ drafts: [EventDraft]) -> String {
    JSONValue.array(
      drafts.map { .object(["type": .string($0.type.rawValue), "data": .object($0.data)]) }
    ).parameterText
  }
}
