package protocol

// LoggingLevel is a syslog severity (RFC 5424).
type LoggingLevel string

const (
	LevelDebug     LoggingLevel = "debug"
	LevelInfo      LoggingLevel = "info"
	LevelNotice    LoggingLevel = "notice"
	LevelWarning   LoggingLevel = "warning"
	LevelError     LoggingLevel = "error"
	LevelCritical  LoggingLevel = "critical"
	LevelAlert     LoggingLevel = "alert"
	LevelEmergency LoggingLevel = "emergency"
)

var levelRank = map[LoggingLevel]int{
	LevelDebug: 0, LevelInfo: 1, LevelNotice: 2, LevelWarning: 3,
	LevelError: 4, LevelCritical: 5, LevelAlert: 6, LevelEmergency: 7,
}

// Rank orders levels from debug (0) to emergency (7); -1 for an unknown
// level.
func (l LoggingLevel) Rank() int {
	if r, ok := levelRank[l]; ok {
		return r
	}
	return -1
}

// SetLevelParams are the parameters of logging/setLevel (legacy).
type SetLevelParams struct {
	Meta  Meta         `json:"_meta,omitempty"`
	Level LoggingLevel `json:"level"`
}

// LoggingMessageParams are the parameters of notifications/message.
type LoggingMessageParams struct {
	Meta   Meta         `json:"_meta,omitempty"`
	Level  LoggingLevel `json:"level"`
	Logger string       `json:"logger,omitempty"`
	Data   any          `json:"data"`
}
