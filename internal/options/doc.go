// Package options holds ripple's configuration: the flags, named as
// stakater/Reloader names them, their defaults, and their validation. Every
// error names the flag at fault.
package options
