extension JSONValue {
  /// A jsonb column's text (or a json document a query built), read by `JSONParser` as request
  /// bodies are. Foundation's `JSONDecoder` into `JSONValue` throws an error for every kind it
  /// tries before the right one, at every nested value: an event's `user_state` cost dozens per
  /// read. PostgreSQL writes jsonb canonically (no duplicate keys, valid UTF-8, no NUL); the
  /// depth bound only keeps a hostile stored document from exhausting the stack.
  package init(databaseText text: String) throws {
    self = try JSONParser.parse(Array(text.utf8), maxDepth: Self.databaseMaxDepth)
  }

  /// Deeper than anything Storekeeper stores: request bodies are held to 16 levels, Apple's
  /// payloads and the documents built in SQL to fewer.
  static let databaseMaxDepth = 64
}
