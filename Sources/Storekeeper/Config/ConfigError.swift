/// A configuration problem, named by its variable: start-up stops with this one line.
public struct ConfigError: Error, CustomStringConvertible, Sendable {
  public var variable: String
  public var problem: String

  public var description: String { "configuration error: \(variable) \(problem)" }
}
