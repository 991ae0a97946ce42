/// One invalid input field, reported in a problem body's `errors` array.
public struct FieldError: Sendable, Equatable {
  public var field: String
  public var message: String

  public init(field: String, message: String) {
    self.field = field
    self.message = message
  }
}
