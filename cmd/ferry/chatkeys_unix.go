//go:build aix || darwin || dragonfly || freebsd || linux || netbsd || openbsd || solaris || zos

package main

import "golang.org/x/sys/unix"

// holdKeys stops the terminal at fd from echoing what is typed, and from
// keeping it until Enter, while the chat's answer streams: the keys
// typed meanwhile would be echoed into the answer. They are read (and
// held) as they come, and the line editor shows them at the next
// prompt. Ctrl-C still sends SIGINT, which stops the turn. It returns
// the way back.
func holdKeys(fd int) (release func(), err error) {
	old, err := unix.IoctlGetTermios(fd, ioctlReadTermios)
	if err != nil {
		return nil, err
	}
	quiet := *old
	quiet.Lflag &^= unix.ECHO | unix.ICANON
	quiet.Cc[unix.VMIN], quiet.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(fd, ioctlWriteTermios, &quiet); err != nil {
		return nil, err
	}
	return func() { unix.IoctlSetTermios(fd, ioctlWriteTermios, old) }, nil
}
