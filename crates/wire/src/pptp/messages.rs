//! The control messages with a body of their own (RFC 2637 §2.1, §2.7–§2.14), each
//! read from and written to a checked view; the common header is [`Repr`]'s.

use super::*;

/// §2.1 Start-Control-Connection-Request (the Reply adds Result and Error Code).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StartControl {
    pub protocol_version: u16,
    /// Reply only ([`result::start`]); zero (Reserved1) in the Request.
    pub result_code: u8,
    pub error_code: ErrorCode,
    /// [`FRAMING_ASYNC`] | [`FRAMING_SYNC`].
    pub framing_capabilities: u32,
    /// [`BEARER_ANALOG`] | [`BEARER_DIGITAL`].
    pub bearer_capabilities: u32,
    /// "A PNS MUST set this field to 0" (§2.1).
    pub maximum_channels: u16,
    pub firmware_revision: u16,
    pub host_name: [u8; NAME_LEN],
    pub vendor_name: [u8; NAME_LEN],
}

/// §2.7 Outgoing-Call-Request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutgoingCallRequest {
    /// The PNS's Call ID: the peer puts it in the Key of GRE packets for this call.
    pub call_id: u16,
    pub call_serial: u16,
    pub minimum_bps: u32,
    pub maximum_bps: u32,
    /// 1 analog, 2 digital, 3 any.
    pub bearer_type: u32,
    /// 1 asynchronous, 2 synchronous, 3 either.
    pub framing_type: u32,
    /// "Packet Recv. Window Size": the most data packets the PNS will buffer (§4.4).
    pub recv_window: u16,
    /// In 1/10 s; "for a PNS ... SHOULD be set to zero" (§2.7).
    pub processing_delay: u16,
    pub phone_length: u16,
    pub phone_number: [u8; PHONE_LEN],
    pub subaddress: [u8; PHONE_LEN],
}

/// §2.8 Outgoing-Call-Reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutgoingCallReply {
    /// The PAC's own Call ID.
    pub call_id: u16,
    /// The Call ID of the OCRQ this answers.
    pub peer_call_id: u16,
    /// [`result::outgoing`].
    pub result_code: u8,
    pub error_code: ErrorCode,
    pub cause_code: u16,
    pub connect_speed: u32,
    pub recv_window: u16,
    pub processing_delay: u16,
    pub physical_channel: u32,
}

/// §2.9 Incoming-Call-Request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IncomingCallRequest {
    pub call_id: u16,
    pub call_serial: u16,
    pub bearer_type: u32,
    pub physical_channel: u32,
    pub dialed_length: u16,
    pub dialing_length: u16,
    pub dialed_number: [u8; PHONE_LEN],
    pub dialing_number: [u8; PHONE_LEN],
    pub subaddress: [u8; PHONE_LEN],
}

/// §2.10 Incoming-Call-Reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IncomingCallReply {
    pub call_id: u16,
    pub peer_call_id: u16,
    /// [`result::incoming`].
    pub result_code: u8,
    pub error_code: ErrorCode,
    pub recv_window: u16,
    pub transmit_delay: u16,
}

/// §2.11 Incoming-Call-Connected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IncomingCallConnected {
    pub peer_call_id: u16,
    pub connect_speed: u32,
    pub recv_window: u16,
    pub transmit_delay: u16,
    pub framing_type: u32,
}

/// §2.13 Call-Disconnect-Notify.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallDisconnectNotify {
    pub call_id: u16,
    /// [`result::disconnect`].
    pub result_code: u8,
    pub error_code: ErrorCode,
    pub cause_code: u16,
    pub call_statistics: [u8; STATS_LEN],
}

/// §2.14 WAN-Error-Notify: the PAC's error counters since the call began.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WanErrorNotify {
    pub peer_call_id: u16,
    pub crc_errors: u32,
    pub framing_errors: u32,
    pub hardware_overruns: u32,
    pub buffer_overruns: u32,
    pub timeout_errors: u32,
    pub alignment_errors: u32,
}

impl StartControl {
    /// A Request as a PNS sends it (§2.1): version 1.0, no result, "MUST set Maximum
    /// Channels to 0".
    pub fn request(framing: u32, bearer: u32, firmware: u16, host: &[u8], vendor: &[u8]) -> StartControl {
        StartControl {
            protocol_version: PROTOCOL_VERSION,
            result_code: 0,
            error_code: ErrorCode::None,
            framing_capabilities: framing,
            bearer_capabilities: bearer,
            maximum_channels: 0,
            firmware_revision: firmware,
            host_name: text(host),
            vendor_name: text(vendor),
        }
    }
}

// Each body's half of `Repr::parse` and `Repr::emit`: the caller has checked the
// view (`check_len` proved the type's whole length present) and writes the header.
// Reserved fields are left as `emit` zeroed them.

impl StartControl {
    /// The Request has Reserved1 where the Reply has Result and Error Code (§2.1, §2.2).
    pub(super) fn parse<T: AsRef<[u8]> + ?Sized>(p: &Packet<&T>, reply: bool) -> StartControl {
        use field::start as f;
        StartControl {
            protocol_version: p.u16_at(f::PROTOCOL_VERSION),
            result_code: if reply { p.u8_at(f::RESULT_CODE) } else { 0 },
            error_code: if reply { ErrorCode::from(p.u8_at(f::ERROR_CODE)) } else { ErrorCode::None },
            framing_capabilities: p.u32_at(f::FRAMING_CAPABILITIES),
            bearer_capabilities: p.u32_at(f::BEARER_CAPABILITIES),
            maximum_channels: p.u16_at(f::MAXIMUM_CHANNELS),
            firmware_revision: p.u16_at(f::FIRMWARE_REVISION),
            host_name: p.array_at(f::HOST_NAME),
            vendor_name: p.array_at(f::VENDOR_NAME),
        }
    }

    pub(super) fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, p: &mut Packet<&mut T>, reply: bool) {
        use field::start as f;
        p.set_u16(f::PROTOCOL_VERSION, self.protocol_version);
        if reply {
            p.set_u8(f::RESULT_CODE, self.result_code);
            p.set_u8(f::ERROR_CODE, self.error_code.into());
        }
        p.set_u32(f::FRAMING_CAPABILITIES, self.framing_capabilities);
        p.set_u32(f::BEARER_CAPABILITIES, self.bearer_capabilities);
        p.set_u16(f::MAXIMUM_CHANNELS, self.maximum_channels);
        p.set_u16(f::FIRMWARE_REVISION, self.firmware_revision);
        p.set_bytes(f::HOST_NAME, &self.host_name);
        p.set_bytes(f::VENDOR_NAME, &self.vendor_name);
    }
}

impl OutgoingCallRequest {
    pub(super) fn parse<T: AsRef<[u8]> + ?Sized>(p: &Packet<&T>) -> OutgoingCallRequest {
        use field::ocrq as f;
        OutgoingCallRequest {
            call_id: p.u16_at(f::CALL_ID),
            call_serial: p.u16_at(f::CALL_SERIAL),
            minimum_bps: p.u32_at(f::MINIMUM_BPS),
            maximum_bps: p.u32_at(f::MAXIMUM_BPS),
            bearer_type: p.u32_at(f::BEARER_TYPE),
            framing_type: p.u32_at(f::FRAMING_TYPE),
            recv_window: p.u16_at(f::RECV_WINDOW),
            processing_delay: p.u16_at(f::PROCESSING_DELAY),
            phone_length: p.u16_at(f::PHONE_LENGTH),
            phone_number: p.array_at(f::PHONE_NUMBER),
            subaddress: p.array_at(f::SUBADDRESS),
        }
    }

    pub(super) fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, p: &mut Packet<&mut T>) {
        use field::ocrq as f;
        p.set_u16(f::CALL_ID, self.call_id);
        p.set_u16(f::CALL_SERIAL, self.call_serial);
        p.set_u32(f::MINIMUM_BPS, self.minimum_bps);
        p.set_u32(f::MAXIMUM_BPS, self.maximum_bps);
        p.set_u32(f::BEARER_TYPE, self.bearer_type);
        p.set_u32(f::FRAMING_TYPE, self.framing_type);
        p.set_u16(f::RECV_WINDOW, self.recv_window);
        p.set_u16(f::PROCESSING_DELAY, self.processing_delay);
        p.set_u16(f::PHONE_LENGTH, self.phone_length);
        p.set_bytes(f::PHONE_NUMBER, &self.phone_number);
        p.set_bytes(f::SUBADDRESS, &self.subaddress);
    }
}

impl OutgoingCallReply {
    pub(super) fn parse<T: AsRef<[u8]> + ?Sized>(p: &Packet<&T>) -> OutgoingCallReply {
        use field::ocrp as f;
        OutgoingCallReply {
            call_id: p.u16_at(f::CALL_ID),
            peer_call_id: p.u16_at(f::PEER_CALL_ID),
            result_code: p.u8_at(f::RESULT_CODE),
            error_code: ErrorCode::from(p.u8_at(f::ERROR_CODE)),
            cause_code: p.u16_at(f::CAUSE_CODE),
            connect_speed: p.u32_at(f::CONNECT_SPEED),
            recv_window: p.u16_at(f::RECV_WINDOW),
            processing_delay: p.u16_at(f::PROCESSING_DELAY),
            physical_channel: p.u32_at(f::PHYSICAL_CHANNEL),
        }
    }

    pub(super) fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, p: &mut Packet<&mut T>) {
        use field::ocrp as f;
        p.set_u16(f::CALL_ID, self.call_id);
        p.set_u16(f::PEER_CALL_ID, self.peer_call_id);
        p.set_u8(f::RESULT_CODE, self.result_code);
        p.set_u8(f::ERROR_CODE, self.error_code.into());
        p.set_u16(f::CAUSE_CODE, self.cause_code);
        p.set_u32(f::CONNECT_SPEED, self.connect_speed);
        p.set_u16(f::RECV_WINDOW, self.recv_window);
        p.set_u16(f::PROCESSING_DELAY, self.processing_delay);
        p.set_u32(f::PHYSICAL_CHANNEL, self.physical_channel);
    }
}

impl IncomingCallRequest {
    pub(super) fn parse<T: AsRef<[u8]> + ?Sized>(p: &Packet<&T>) -> IncomingCallRequest {
        use field::icrq as f;
        IncomingCallRequest {
            call_id: p.u16_at(f::CALL_ID),
            call_serial: p.u16_at(f::CALL_SERIAL),
            bearer_type: p.u32_at(f::BEARER_TYPE),
            physical_channel: p.u32_at(f::PHYSICAL_CHANNEL),
            dialed_length: p.u16_at(f::DIALED_LENGTH),
            dialing_length: p.u16_at(f::DIALING_LENGTH),
            dialed_number: p.array_at(f::DIALED_NUMBER),
            dialing_number: p.array_at(f::DIALING_NUMBER),
            subaddress: p.array_at(f::SUBADDRESS),
        }
    }

    pub(super) fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, p: &mut Packet<&mut T>) {
        use field::icrq as f;
        p.set_u16(f::CALL_ID, self.call_id);
        p.set_u16(f::CALL_SERIAL, self.call_serial);
        p.set_u32(f::BEARER_TYPE, self.bearer_type);
        p.set_u32(f::PHYSICAL_CHANNEL, self.physical_channel);
        p.set_u16(f::DIALED_LENGTH, self.dialed_length);
        p.set_u16(f::DIALING_LENGTH, self.dialing_length);
        p.set_bytes(f::DIALED_NUMBER, &self.dialed_number);
        p.set_bytes(f::DIALING_NUMBER, &self.dialing_number);
        p.set_bytes(f::SUBADDRESS, &self.subaddress);
    }
}

impl IncomingCallReply {
    pub(super) fn parse<T: AsRef<[u8]> + ?Sized>(p: &Packet<&T>) -> IncomingCallReply {
        use field::icrp as f;
        IncomingCallReply {
            call_id: p.u16_at(f::CALL_ID),
            peer_call_id: p.u16_at(f::PEER_CALL_ID),
            result_code: p.u8_at(f::RESULT_CODE),
            error_code: ErrorCode::from(p.u8_at(f::ERROR_CODE)),
            recv_window: p.u16_at(f::RECV_WINDOW),
            transmit_delay: p.u16_at(f::TRANSMIT_DELAY),
        }
    }

    pub(super) fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, p: &mut Packet<&mut T>) {
        use field::icrp as f;
        p.set_u16(f::CALL_ID, self.call_id);
        p.set_u16(f::PEER_CALL_ID, self.peer_call_id);
        p.set_u8(f::RESULT_CODE, self.result_code);
        p.set_u8(f::ERROR_CODE, self.error_code.into());
        p.set_u16(f::RECV_WINDOW, self.recv_window);
        p.set_u16(f::TRANSMIT_DELAY, self.transmit_delay);
    }
}

impl IncomingCallConnected {
    pub(super) fn parse<T: AsRef<[u8]> + ?Sized>(p: &Packet<&T>) -> IncomingCallConnected {
        use field::iccn as f;
        IncomingCallConnected {
            peer_call_id: p.u16_at(f::PEER_CALL_ID),
            connect_speed: p.u32_at(f::CONNECT_SPEED),
            recv_window: p.u16_at(f::RECV_WINDOW),
            transmit_delay: p.u16_at(f::TRANSMIT_DELAY),
            framing_type: p.u32_at(f::FRAMING_TYPE),
        }
    }

    pub(super) fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, p: &mut Packet<&mut T>) {
        use field::iccn as f;
        p.set_u16(f::PEER_CALL_ID, self.peer_call_id);
        p.set_u32(f::CONNECT_SPEED, self.connect_speed);
        p.set_u16(f::RECV_WINDOW, self.recv_window);
        p.set_u16(f::TRANSMIT_DELAY, self.transmit_delay);
        p.set_u32(f::FRAMING_TYPE, self.framing_type);
    }
}

impl CallDisconnectNotify {
    pub(super) fn parse<T: AsRef<[u8]> + ?Sized>(p: &Packet<&T>) -> CallDisconnectNotify {
        use field::cdn as f;
        CallDisconnectNotify {
            call_id: p.u16_at(f::CALL_ID),
            result_code: p.u8_at(f::RESULT_CODE),
            error_code: ErrorCode::from(p.u8_at(f::ERROR_CODE)),
            cause_code: p.u16_at(f::CAUSE_CODE),
            call_statistics: p.array_at(f::CALL_STATISTICS),
        }
    }

    pub(super) fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, p: &mut Packet<&mut T>) {
        use field::cdn as f;
        p.set_u16(f::CALL_ID, self.call_id);
        p.set_u8(f::RESULT_CODE, self.result_code);
        p.set_u8(f::ERROR_CODE, self.error_code.into());
        p.set_u16(f::CAUSE_CODE, self.cause_code);
        p.set_bytes(f::CALL_STATISTICS, &self.call_statistics);
    }
}

impl WanErrorNotify {
    pub(super) fn parse<T: AsRef<[u8]> + ?Sized>(p: &Packet<&T>) -> WanErrorNotify {
        use field::wen as f;
        WanErrorNotify {
            peer_call_id: p.u16_at(f::PEER_CALL_ID),
            crc_errors: p.u32_at(f::CRC_ERRORS),
            framing_errors: p.u32_at(f::FRAMING_ERRORS),
            hardware_overruns: p.u32_at(f::HARDWARE_OVERRUNS),
            buffer_overruns: p.u32_at(f::BUFFER_OVERRUNS),
            timeout_errors: p.u32_at(f::TIMEOUT_ERRORS),
            alignment_errors: p.u32_at(f::ALIGNMENT_ERRORS),
        }
    }

    pub(super) fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, p: &mut Packet<&mut T>) {
        use field::wen as f;
        p.set_u16(f::PEER_CALL_ID, self.peer_call_id);
        p.set_u32(f::CRC_ERRORS, self.crc_errors);
        p.set_u32(f::FRAMING_ERRORS, self.framing_errors);
        p.set_u32(f::HARDWARE_OVERRUNS, self.hardware_overruns);
        p.set_u32(f::BUFFER_OVERRUNS, self.buffer_overruns);
        p.set_u32(f::TIMEOUT_ERRORS, self.timeout_errors);
        p.set_u32(f::ALIGNMENT_ERRORS, self.alignment_errors);
    }
}
