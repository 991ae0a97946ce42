/// A configuration problem, named by its variable: start-up stops with this one line.
public struct ConfigError: Error, CustomStringConvertible, Sendable {
  public var variable: String
  public var problem: String

  public init(variable: String, problem: String) {
    self.variable = variable
    self.problem = problem
  }

  public var description: String { "configuration error: \(variable) \(problem)" }
}
