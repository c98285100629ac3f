"""espeak-ng's own voices through libespeak-ng: the samples and, from its phoneme events, the time
at which each phoneme starts in those samples (the synthesizer's own timing, not an alignment)."""
import ctypes
import ctypes.util

import numpy as np

_EVENT_PHONEME = 7
_EVENT_LIST_TERMINATED = 0
_AUDIO_OUTPUT_SYNCHRONOUS = 2
_INITIALIZE_PHONEME_EVENTS = 0x0001
_INITIALIZE_DONT_EXIT = 0x8000
_CHARS_UTF8 = 1


class _Id(ctypes.Union):
    _fields_ = [("number", ctypes.c_int), ("name", ctypes.c_char_p), ("string", ctypes.c_char * 8)]


class _Event(ctypes.Structure):
    _fields_ = [
        ("type", ctypes.c_int),
        ("unique_identifier", ctypes.c_uint),
        ("text_position", ctypes.c_int),
        ("length", ctypes.c_int),
        ("audio_position", ctypes.c_int),
        ("sample", ctypes.c_int),
        ("user_data", ctypes.c_void_p),
        ("id", _Id),
    ]


_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.POINTER(_Event))


class Espeak:
    def __init__(self):
        self.lib = ctypes.CDLL(ctypes.util.find_library("espeak-ng") or "libespeak-ng.so.1")
        self.rate = self.lib.espeak_Initialize(_AUDIO_OUTPUT_SYNCHRONOUS, 0, None,
                                               _INITIALIZE_PHONEME_EVENTS | _INITIALIZE_DONT_EXIT)
        if self.rate <= 0:
            raise RuntimeError("espeak_Initialize failed")
        self._chunks = []
        self._events = []
        self._cb = _CALLBACK(self._on_audio)
        self.lib.espeak_SetSynthCallback(self._cb)

    def _on_audio(self, wav, n, events):
        if n > 0:
            self._chunks.append(np.ctypeslib.as_array(wav, shape=(n,)).copy())
        i = 0
        while events[i].type != _EVENT_LIST_TERMINATED:
            e = events[i]
            if e.type == _EVENT_PHONEME:
                self._events.append((e.sample, e.id.string.decode("ascii", "replace")))
            i += 1
        return 0

    def synth(self, text, voice, wpm, pitch):
        """(float32 samples at self.rate, [(start sample, espeak phoneme name)])."""
        self.lib.espeak_SetVoiceByName(voice.encode())
        self.lib.espeak_SetParameter(1, int(wpm), 0)  # espeakRATE
        self.lib.espeak_SetParameter(3, int(pitch), 0)  # espeakPITCH
        self._chunks, self._events = [], []
        b = text.encode("utf-8") + b"\0"
        self.lib.espeak_Synth(ctypes.c_char_p(b), len(b), 0, 0, 0, _CHARS_UTF8, None, None)
        self.lib.espeak_Synchronize()
        audio = np.concatenate(self._chunks).astype(np.float32) / 32768.0 if self._chunks else np.zeros(0, np.float32)
        return audio, list(self._events)
