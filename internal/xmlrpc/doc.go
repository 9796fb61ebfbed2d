// Package xmlrpc reads and writes XML-RPC messages (Winer, 1999), the
// encoding of the MS-FSCADM administration API.
//
// # Wire layout
//
// A call and its response travel as the body of one HTTP POST:
//
//	<?xml version="1.0"?>
//	<methodCall>
//	  <methodName>AddURIs</methodName>
//	  <params>
//	    <param><value><string>contoso</string></value></param>
//	    <param><value><int>0</int></value></param>
//	    <param><value><array><data>
//	      <value><string>http://www.contoso.com/</string></value>
//	    </data></array></value></param>
//	  </params>
//	</methodCall>
//
//	<methodResponse>                      <methodResponse>
//	  <params><param>                       <fault><value><struct>
//	    <value>...</value>                    <member><name>faultCode</name>
//	  </param></params>                         <value><int>1</int></value></member>
//	</methodResponse>                         <member><name>faultString</name>
//	                                            <value><string>...</string></value></member>
//	                                        </struct></value></fault>
//	                                      </methodResponse>
//
// A value is one of
//
//	<int>, <i4>    Int (32-bit on the wire; <i8>, a common extension, is read
//	               into the same type and written for integers beyond int32)
//	<boolean>      Bool, 0 or 1
//	<string>       String; a <value> with text and no type element is a string
//	<double>       Double
//	<dateTime.iso8601>  DateTime, 19980717T14:08:55 (no zone on the wire)
//	<base64>       Base64, the raw bytes (whitespace in the text is ignored)
//	<struct>       Struct: <member><name>k</name><value>v</value></member>...
//	<array>        Array: <data><value>v</value>...</data>
//	<nil/>         Nil, the extension Python's xmlrpc.client sends with
//	               allow_none; read, and written only for a Nil value
//
// # Decoding
//
// DecodeCall and DecodeResponse read a message with a streaming
// encoding/xml decoder, within Limits: the message size, the nesting depth
// of values and the number of values are capped before anything is kept, so
// a hostile body costs at most a small multiple of its size. Anything that
// is not a well-formed XML-RPC message is an error wrapping ErrInvalid (or
// ErrLimit); decoding never panics. A fault response decodes to a *Fault
// error.
//
// # Encoding
//
// EncodeCall, EncodeResponse and EncodeFault write what Python's
// xmlrpc.client and the decoder here both read back to equal values. Text is
// escaped; a string holding a character XML 1.0 cannot carry (most control
// characters, invalid UTF-8) and a NaN or infinite double are errors, since
// no XML-RPC peer could read them back.
package xmlrpc
