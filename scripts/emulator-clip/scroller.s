; scroller.nes: a tiny public-domain NES program (ca65) whose every frame
; moves, for recording a real emulator's 60 fps output: a two-screen
; background of pixel-art tiles scrolls 1 px per frame to the left and bobs
; vertically, one background colour cycles every 8 frames, and 24 sprites
; bounce around the screen. Written for stylepipe's live-latency clip
; (scripts/make-emulator-clip.sh); no third-party code or graphics.
;
; Build: ca65 scroller.s -o scroller.o && ld65 -C nrom.cfg scroller.o -o scroller.nes

PPUCTRL   = $2000
PPUMASK   = $2001
PPUSTATUS = $2002
OAMADDR   = $2003
PPUSCROLL = $2005
PPUADDR   = $2006
PPUDATA   = $2007
OAMDMA    = $4014
APUFRAME  = $4017
DMCFREQ   = $4010

BALLS = 24

.segment "HEADER"
  .byte "NES", $1A
  .byte 1          ; 16 KB of program
  .byte 0          ; no CHR-ROM: 8 KB of CHR-RAM
  .byte $01        ; mapper 0, vertical mirroring (two screens side by side)
  .byte $00

.segment "ZEROPAGE"
frame:      .res 2  ; frames since start; the low 9 bits are the horizontal scroll
nmi_count:  .res 1  ; bumped by every NMI; the main loop waits for it to change
pointer:    .res 2
count:      .res 1

.segment "OAM"
oam: .res 256

.segment "BSS"
ball_x:  .res BALLS
ball_y:  .res BALLS
ball_dx: .res BALLS
ball_dy: .res BALLS

.segment "CODE"

reset:
  sei
  cld
  ldx #$40
  stx APUFRAME        ; no APU frame interrupt
  ldx #$FF
  txs
  inx
  stx PPUCTRL
  stx PPUMASK
  stx DMCFREQ
  bit PPUSTATUS
@wait_vblank1:
  bit PPUSTATUS
  bpl @wait_vblank1
  txa
@clear_ram:
  sta $0000,x
  sta $0100,x
  sta $0300,x
  sta $0400,x
  sta $0500,x
  sta $0600,x
  sta $0700,x
  inx
  bne @clear_ram
  lda #$FF            ; every sprite below the screen until placed
@hide_sprites:
  sta oam,x
  inx
  bne @hide_sprites
@wait_vblank2:
  bit PPUSTATUS
  bpl @wait_vblank2

  jsr load_palette
  jsr draw_tiles
  jsr draw_screens
  jsr start_balls

  lda #$80            ; NMI on, both pattern tables at $0000
  sta PPUCTRL
  lda #$1E            ; background and sprites, leftmost 8 px too
  sta PPUMASK

main_loop:
  jsr move_balls
  lda nmi_count
@wait_frame:
  cmp nmi_count
  beq @wait_frame
  jmp main_loop

; Palettes: four for the background, four for the sprites.
load_palette:
  lda #$3F
  sta PPUADDR
  lda #$00
  sta PPUADDR
  ldx #0
@next:
  lda palette,x
  sta PPUDATA
  inx
  cpx #32
  bne @next
  rts

; 32 tiles into CHR-RAM: tile t is bit plane 0 from shape (t & 7) and bit
; plane 1 from shape ((t >> 2) & 7), so each tile has up to four colours.
draw_tiles:
  lda #$00
  sta PPUADDR
  sta PPUADDR
  ldx #0              ; tile number
@tile:
  txa
  and #7
  asl
  asl
  asl
  tay
  jsr copy_shape_rows
  txa
  lsr
  lsr
  and #7
  asl
  asl
  asl
  tay
  jsr copy_shape_rows
  inx
  cpx #32
  bne @tile
  rts

copy_shape_rows:      ; the 8 rows of shapes+Y
  lda #8
  sta count
@row:
  lda shapes,y
  sta PPUDATA
  iny
  dec count
  bne @row
  rts

; Both nametables (tiles and attributes, 2 x 1024 bytes) from the tables below.
draw_screens:
  lda #$20
  sta PPUADDR
  lda #$00
  sta PPUADDR
  lda #<screens
  sta pointer
  lda #>screens
  sta pointer+1
  ldx #8              ; 8 pages of 256 bytes
  ldy #0
@byte:
  lda (pointer),y
  sta PPUDATA
  iny
  bne @byte
  inc pointer+1
  dex
  bne @byte
  rts

start_balls:
  ldx #0
@next:
  lda ball_start_x,x
  sta ball_x,x
  lda ball_start_y,x
  sta ball_y,x
  lda ball_start_dx,x
  sta ball_dx,x
  lda ball_start_dy,x
  sta ball_dy,x
  inx
  cpx #BALLS
  bne @next
  rts

; Each ball moves by its velocity and bounces off the edges (x in 0..247,
; y in 0..223); then its sprite is written to the OAM copy.
move_balls:
  ldx #0
  ldy #0              ; OAM offset
@ball:
  lda ball_x,x
  clc
  adc ball_dx,x
  cmp #248
  bcc @x_inside
  lda #0
  sec
  sbc ball_dx,x
  sta ball_dx,x
  lda ball_x,x
@x_inside:
  sta ball_x,x
  lda ball_y,x
  clc
  adc ball_dy,x
  cmp #224
  bcc @y_inside
  lda #0
  sec
  sbc ball_dy,x
  sta ball_dy,x
  lda ball_y,x
@y_inside:
  sta ball_y,x
  clc
  adc #7              ; sprites show one line below their OAM y
  sta oam,y
  txa
  and #1
  clc
  adc #21             ; tiles 21 (disc) and 22 (diamond in a disc)
  sta oam+1,y
  txa
  and #3              ; sprite palette
  sta oam+2,y
  lda ball_x,x
  sta oam+3,y
  iny
  iny
  iny
  iny
  inx
  cpx #BALLS
  bne @ball
  rts

nmi:
  pha
  txa
  pha
  lda #$00
  sta OAMADDR
  lda #>oam
  sta OAMDMA
  lda frame           ; every 8 frames, background colour 1 of palette 3 cycles
  and #7
  bne @scroll
  lda #$3F
  sta PPUADDR
  lda #$0D
  sta PPUADDR
  lda frame
  lsr
  lsr
  lsr
  and #7
  tax
  lda colour_cycle,x
  sta PPUDATA
@scroll:
  lda frame
  sta PPUSCROLL       ; x: 1 px a frame across both screens
  and #63
  tax
  lda bob,x
  sta PPUSCROLL       ; y: a slow bob, 0..15 px
  lda frame+1
  and #1
  ora #$80            ; which screen the scroll starts in
  sta PPUCTRL
  inc frame
  bne @counted
  inc frame+1
@counted:
  inc nmi_count
  pla
  tax
  pla
irq:
  rti

.segment "RODATA"

palette:
  .byte $21,$30,$16,$06, $21,$29,$19,$09, $21,$27,$17,$07, $21,$12,$22,$02
  .byte $21,$30,$27,$16, $21,$30,$2A,$1A, $21,$30,$31,$11, $21,$30,$24,$14

colour_cycle:
  .byte $12,$13,$14,$15,$16,$17,$18,$19

bob:                  ; 8 + 7 sin(2 pi i / 64), rounded
  .repeat 64, I
    .byte 8 + (7 * (((I .mod 32) * (32 - (I .mod 32))) / 32) / 8) * (1 - 2 * (I / 32))
  .endrepeat

shapes:
  .byte $00,$00,$00,$00,$00,$00,$00,$00   ; 0 blank
  .byte $03,$06,$0C,$18,$30,$60,$C0,$81   ; 1 diagonal
  .byte $C0,$60,$30,$18,$0C,$06,$03,$81   ; 2 other diagonal
  .byte $CC,$CC,$33,$33,$CC,$CC,$33,$33   ; 3 checker
  .byte $FF,$80,$80,$80,$FF,$08,$08,$08   ; 4 brick
  .byte $3C,$7E,$FF,$FF,$FF,$FF,$7E,$3C   ; 5 disc
  .byte $18,$3C,$7E,$FF,$FF,$7E,$3C,$18   ; 6 diamond
  .byte $00,$81,$C3,$66,$3C,$18,$00,$00   ; 7 chevron

; Screen S (0 left, 1 right), tile column X (0..63 across both), row Y:
; sky with scattered clouds above row 10, diagonal bands of tiles down to
; row 21, bricks below. Attributes: a palette per 32x32 block, varied.
screens:
  .repeat 2, S
    .repeat 960, I
      tile_x .set I .mod 32 + 32 * S
      tile_y .set I / 32
      .if tile_y < 10
        .byte ((tile_x * 7 + tile_y * 13) .mod 29 < 2) * 6
      .elseif tile_y < 22
        .byte 8 + (tile_x / 2 + tile_y / 2) .mod 8
      .else
        .byte 4 + 16 * ((tile_x + tile_y) .mod 2)
      .endif
    .endrepeat
    .repeat 64, I
      .byte ((((I .mod 8) + 8 * S) * 3 + I / 8) .mod 4) * $55
    .endrepeat
  .endrepeat

ball_start_x:
  .repeat BALLS, I
    .byte 16 + (I * 37) .mod 216
  .endrepeat
ball_start_y:
  .repeat BALLS, I
    .byte 16 + (I * 53) .mod 192
  .endrepeat
ball_start_dx:
  .repeat BALLS, I
    .byte <((1 + I .mod 3) * (1 - 2 * (I .mod 2)))
  .endrepeat
ball_start_dy:
  .repeat BALLS, I
    .byte <((1 + (I / 3) .mod 2) * (1 - 2 * ((I / 2) .mod 2)))
  .endrepeat

.segment "VECTORS"
  .word nmi, reset, irq
