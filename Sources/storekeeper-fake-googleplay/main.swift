import FakeGooglePlay
import Foundation

// Dispatch only. Google's stand-in for tests and the demo is a binary of its own so that the
// shipped `storekeeper` links neither it nor its keys.
exit(await FakeGooglePlayCommand.run(Array(CommandLine.arguments.dropFirst())))
